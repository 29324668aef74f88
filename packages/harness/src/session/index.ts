// The session store's wire types and ids, for the workers that drive it (the harness) and tests.
export { SessionEvent } from './events.ts';
export type { AgentMessage, AttachmentMeta, ContentBlock, Role, SessionEntry, SessionMeta, SessionStatus } from './types.ts';

/** Every function the session store registers (console-worker.md §2.2). */
export const SESSION_FUNCTIONS = [
  'session::create',
  'session::ensure',
  'session::get',
  'session::list',
  'session::set-meta',
  'session::set-draft',
  'session::set-status',
  'session::delete',
  'session::append',
  'session::append-many',
  'session::update-message',
  'session::messages',
  'session::get-message',
  'session::fork',
  'session::set-active-leaf',
  'session::put-attachment',
  'session::get-attachment',
  'session::list-attachments',
  'session::delete-attachment',
] as const;
