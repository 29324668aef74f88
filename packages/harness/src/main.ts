import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CHAT_ROLES, roleForWorker } from './roles.ts';

// `eng-chat <role>` (bin/eng-chat.js) and the engine supervisor's chat workers: run one role of
// the chat stack as a worker. The role may also come from ENG_CHAT_ROLE or the worker name.

const HERE = dirname(fileURLToPath(import.meta.url));
const USAGE = `usage: eng-chat <role>\n\nroles:\n${Object.entries(CHAT_ROLES)
  .map(([name, role]) => `  ${name.padEnd(20)} ${role.worker.padEnd(20)} ${role.description}`)
  .join('\n')}\n\nThe worker connects to ENG_URL (default ws://127.0.0.1:49134).`;

const arg = process.argv[2];
if (arg === '--help' || arg === '-h') {
  process.stdout.write(`${USAGE}\n`);
} else {
  const name = arg ?? process.env.ENG_CHAT_ROLE ?? roleForWorker(process.env.ENG_WORKER_NAME ?? '');
  const role = name === undefined ? undefined : (CHAT_ROLES[name] ?? CHAT_ROLES[roleForWorker(name) ?? '']);
  if (!role) {
    process.stderr.write(`eng-chat: ${name === undefined ? 'no role given' : `unknown role "${name}"`}\n\n${USAGE}\n`);
    process.exit(2);
  }
  const file = join(HERE, role.module);
  if (!existsSync(file)) {
    // a role whose code is not in this build: say so once instead of a module-resolution stack
    process.stderr.write(
      `eng-chat: role "${name}" (${role.worker}) is not available in this build: ${role.module.slice(2)} is missing under ${HERE}\n`,
    );
    process.exit(78);
  }
  const module = (await import(file)) as { main?: () => Promise<void> };
  if (typeof module.main !== 'function') {
    process.stderr.write(`eng-chat: ${role.module} does not export main()\n`);
    process.exit(78);
  }
  await module.main();
}
