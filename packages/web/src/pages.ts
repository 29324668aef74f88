import {
  Activity,
  Cpu,
  Database,
  GitBranch,
  Inbox,
  LayoutDashboard,
  type LucideIcon,
  MessagesSquare,
  Radio,
  ScrollText,
  Settings2,
  SquareFunction,
  Workflow,
  Zap,
} from 'lucide-react';
import type { Surface } from './api/presence.ts';

/**
 * The navigation: one entry per page, in sidebar order. The command palette, the `g <key>`
 * shortcuts and the sidebar all read this list. `flowOnly` pages appear only with `--enable-flow`;
 * `presence` pages only while their worker is connected (api/presence.ts, issue 7 §8).
 */
export interface PageEntry {
  path:
    | '/'
    | '/functions'
    | '/triggers'
    | '/states'
    | '/streams'
    | '/queues'
    | '/traces'
    | '/logs'
    | '/flow'
    | '/config'
    | '/workers'
    | '/chat'
    | '/worktrees';
  label: string;
  description: string;
  icon: LucideIcon;
  /** Second key of the `g <key>` shortcut. */
  key: string;
  section: 'Overview' | 'Build' | 'Data' | 'Observe' | 'System';
  flowOnly?: boolean;
  presence?: Surface;
}

/**
 * ⌘/Ctrl + 1…9 (console spec §4 Global UX, the reference's order): Workers, Functions, Triggers,
 * States, Streams, Queues, Dead letters (the Queues tab), Traces, Logs.
 */
export interface NumberJump {
  digit: string;
  label: string;
  path: PageEntry['path'];
  deadLetters?: boolean;
}

export const NUMBER_JUMPS: NumberJump[] = [
  { digit: '1', label: 'Workers', path: '/workers' },
  { digit: '2', label: 'Functions', path: '/functions' },
  { digit: '3', label: 'Triggers', path: '/triggers' },
  { digit: '4', label: 'States', path: '/states' },
  { digit: '5', label: 'Streams', path: '/streams' },
  { digit: '6', label: 'Queues', path: '/queues' },
  { digit: '7', label: 'Dead letters', path: '/queues', deadLetters: true },
  { digit: '8', label: 'Traces', path: '/traces' },
  { digit: '9', label: 'Logs', path: '/logs' },
];

export const PAGES: PageEntry[] = [
  {
    path: '/',
    label: 'Dashboard',
    description: 'Counters, invocation rate and the application flow',
    icon: LayoutDashboard,
    key: 'd',
    section: 'Overview',
  },
  {
    path: '/flow',
    label: 'Flow',
    description: 'Triggers → functions → state and queues, as a graph',
    icon: Workflow,
    key: 'w',
    section: 'Overview',
    flowOnly: true,
  },
  {
    path: '/chat',
    label: 'Chat',
    description: 'Conversations with the chat stack: models, function calls, approvals',
    icon: MessagesSquare,
    key: 'a',
    section: 'Overview',
    presence: 'chat',
  },
  {
    path: '/functions',
    label: 'Functions',
    description: 'Registered functions, schemas and Invoke',
    icon: SquareFunction,
    key: 'f',
    section: 'Build',
  },
  {
    path: '/triggers',
    label: 'Triggers',
    description: 'HTTP, cron, event, queue and state bindings',
    icon: Zap,
    key: 't',
    section: 'Build',
  },
  {
    path: '/workers',
    label: 'Workers',
    description: 'Connected worker processes and engine modules',
    icon: Cpu,
    key: 'k',
    section: 'Build',
  },
  {
    path: '/worktrees',
    label: 'Worktrees',
    description: 'Git worktrees, their branches and the sessions that own them',
    icon: GitBranch,
    key: 'o',
    section: 'Build',
    presence: 'worktrees',
  },
  { path: '/states', label: 'States', description: 'The key-value state store', icon: Database, key: 's', section: 'Data' },
  { path: '/streams', label: 'Streams', description: 'Streams, groups and the live monitor', icon: Radio, key: 'm', section: 'Data' },
  { path: '/queues', label: 'Queues', description: 'Durable queues and dead letters', icon: Inbox, key: 'q', section: 'Data' },
  { path: '/traces', label: 'Traces', description: 'Distributed traces of every invocation', icon: Activity, key: 'r', section: 'Observe' },
  { path: '/logs', label: 'Logs', description: 'Structured logs with live tail', icon: ScrollText, key: 'l', section: 'Observe' },
  {
    path: '/config',
    label: 'Config',
    description: 'Connectivity, ports, OpenTelemetry and versions',
    icon: Settings2,
    key: 'c',
    section: 'System',
  },
];
