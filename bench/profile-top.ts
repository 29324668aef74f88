/**
 * The top frames of a V8 CPU profile by self time: `node --import tsx bench/profile-top.ts FILE.cpuprofile [N]`.
 * Benches write profiles of every process they spawn with BENCH_PROFILE_DIR=<dir> (bench/lib.ts).
 */
import { readFileSync } from 'node:fs';

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount?: number;
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

// piped into `head`: a closed stdout ends the listing quietly
process.stdout.on('error', (err: NodeJS.ErrnoException) => {
  if (err.code === 'EPIPE') process.exit(0);
  throw err;
});
const [file, count] = process.argv.slice(2);
if (!file) {
  console.error('usage: bench/profile-top.ts FILE.cpuprofile [N]');
  process.exit(2);
}
const profile = JSON.parse(readFileSync(file, 'utf8')) as Profile;
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const selfUs = new Map<string, number>();
let total = 0;
profile.samples.forEach((id, i) => {
  const node = byId.get(id);
  const dt = profile.timeDeltas[i] ?? 0;
  if (!node) return;
  const { functionName, url, lineNumber } = node.callFrame;
  const where = url ? `${url.replace(/^.*\/(node_modules|packages)\//, '$1/')}:${lineNumber + 1}` : '';
  const key = `${functionName || '(anonymous)'} ${where}`.trim();
  selfUs.set(key, (selfUs.get(key) ?? 0) + dt);
  total += dt;
});
const idle = ['(idle)', '(program)', '(garbage collector)'];
const busy = [...selfUs].filter(([k]) => !idle.includes(k)).reduce((n, [, v]) => n + v, 0);
console.log(`total ${(total / 1000).toFixed(0)} ms sampled, busy ${(busy / 1000).toFixed(0)} ms`);
for (const [key, us] of [...selfUs].sort((a, b) => b[1] - a[1]).slice(0, Number(count ?? 25))) {
  console.log(`${((us / total) * 100).toFixed(1).padStart(5)}%  ${(us / 1000).toFixed(1).padStart(8)} ms  ${key}`);
}
