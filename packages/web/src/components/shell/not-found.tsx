import { Link } from '@tanstack/react-router';
import { Compass } from 'lucide-react';
import { EmptyState } from '../ui/empty-state.tsx';

export function NotFound() {
  return (
    <EmptyState
      icon={Compass}
      title="This page does not exist"
      action={
        <Link to="/" className="text-[13px] font-medium text-accent hover:underline">
          Back to the dashboard
        </Link>
      }
    >
      The address after <code className="font-mono">#</code> names no console page. Use ⌘K to find one.
    </EmptyState>
  );
}
