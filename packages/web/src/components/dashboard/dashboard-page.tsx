import { Link } from '@tanstack/react-router';
import { Cpu, type LucideIcon, Radio, SquareFunction, Zap } from 'lucide-react';
import { isSystemFunction, useFunctions } from '../../api/functions.ts';
import { useStreams } from '../../api/streams.ts';
import { isSystemTrigger, useTriggers } from '../../api/triggers.ts';
import { isProcessWorker, useWorkers } from '../../api/workers.ts';
import { PageHeader } from '../ui/page-header.tsx';

export function DashboardPage() {
  const functions = useFunctions();
  const triggers = useTriggers();
  const workers = useWorkers();
  const streams = useStreams();
  return (
    <div>
      <PageHeader title="Dashboard" description="What is registered on the engine right now." />
      <div className="grid grid-cols-2 gap-3 p-4 md:p-6 lg:grid-cols-4">
        <Counter
          testId="functions"
          label="Functions"
          icon={SquareFunction}
          to="/functions"
          value={functions.data?.filter((f) => !isSystemFunction(f)).length}
        />
        <Counter
          testId="triggers"
          label="Triggers"
          icon={Zap}
          to="/triggers"
          value={triggers.data?.filter((t) => !isSystemTrigger(t)).length}
        />
        <Counter testId="workers" label="Workers" icon={Cpu} to="/workers" value={workers.data?.filter(isProcessWorker).length} />
        <Counter testId="streams" label="Streams" icon={Radio} to="/streams" value={streams.data?.length} />
      </div>
    </div>
  );
}

function Counter({
  label,
  icon: Icon,
  to,
  value,
  testId,
}: {
  label: string;
  icon: LucideIcon;
  to: '/functions' | '/triggers' | '/workers' | '/streams';
  value: number | undefined;
  testId: string;
}) {
  return (
    <Link
      to={to}
      data-testid={`counter-${testId}`}
      className="rounded-xl border border-line bg-surface p-4 shadow-card transition-colors hover:border-line-strong"
    >
      <div className="flex items-center gap-2 text-[13px] text-muted">
        <Icon size={15} /> {label}
      </div>
      <div className="mt-2 text-3xl font-semibold tabular-nums" data-value={value ?? ''}>
        {value ?? '—'}
      </div>
    </Link>
  );
}
