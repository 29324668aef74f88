/** `npm run bench`: every benchmark in turn; each prints its own figures and ratios. */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { NODE_TS, REPO_ROOT } from '../test/harness.ts';

const only = process.argv.slice(2);
const benches = ['invoke', 'http', 'spans', 'state', 'queue', 'traces', 'mcp', 'proxy', 'chat', 'worktree'].filter(
  (b) => only.length === 0 || only.includes(b),
);
let failed = 0;
for (const name of benches) {
  const file = `bench/${name}.ts`;
  if (!existsSync(`${REPO_ROOT}/${file}`)) continue;
  console.log(`\n━━ ${file} ━━`);
  const result = spawnSync(process.execPath, [...NODE_TS, file], { cwd: REPO_ROOT, stdio: 'inherit' });
  if (result.status !== 0) failed++;
}
process.exit(failed ? 1 : 0);
