/**
 * Skills (io.modelcontextprotocol/skills, SEP-2640) contributed by engine functions with
 * `"mcp.skill"` metadata (mcp README §Skills): listed with complete manifests (sha256 digests and
 * sizes of the bytes resources/read serves), got by URI, read file by file, directories read; the
 * exposure gate applies; a function answering a bad skill (a path escaping the skill, a name that
 * does not match, too many files) is refused with a clear error and the others still served; a
 * 2025-11-25 session reads the same files.
 */
import { createHash } from 'node:crypto';
import { connect, type EngClient } from '@eng/sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type EngineProcess, waitFor } from '../../../test/harness.ts';
import { type HttpMcp, httpClient, httpMcp, meta2026, post2026, startMcpEngine } from './helpers.ts';

let engine: EngineProcess;
let worker: EngClient;
let mcp: HttpMcp;

const SKILL_MD = '---\nname: release-notes\ndescription: Write release notes from merged changes\n---\n\nSee `templates/`.\n';
const LOGO = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0, 1, 2, 3]);

beforeAll(async () => {
  engine = await startMcpEngine();
  worker = connect(engine.busUrl, { name: 'skills-worker', logger: { debug() {}, info() {}, warn() {}, error() {} } });
  const expose = { 'mcp.expose': true };
  worker.registerFunction(
    'skills::notes',
    (input: { skill?: string }) => ({
      'SKILL.md': SKILL_MD,
      'templates/short.md': `# Short (${input.skill})\n`,
      'assets/logo.png': { blob: LOGO.toString('base64') },
    }),
    { description: 'Write release notes from merged changes', metadata: { ...expose, 'mcp.skill': 'team/release-notes' } },
  );
  worker.registerFunction('skills::hidden', () => '---\nname: hidden\ndescription: x\n---\n', { metadata: { 'mcp.skill': 'hidden' } });
  worker.registerFunction('skills::escape', () => ({ 'SKILL.md': '---\nname: escape\ndescription: x\n---\n', '../../etc/passwd': 'x' }), {
    metadata: { ...expose, 'mcp.skill': 'escape' },
  });
  worker.registerFunction('skills::misnamed', () => '---\nname: other-name\ndescription: x\n---\n', {
    metadata: { ...expose, 'mcp.skill': 'misnamed' },
  });
  worker.registerFunction(
    'skills::huge',
    () =>
      Object.fromEntries([
        ['SKILL.md', '---\nname: huge\ndescription: x\n---\n'],
        ...Array.from({ length: 600 }, (_, i) => [`f${i}.md`, 'x']),
      ]),
    { metadata: { ...expose, 'mcp.skill': 'huge' } },
  );
  worker.registerFunction('skills::bad_path', () => 'x', { metadata: { ...expose, 'mcp.skill': 'Bad Name' } });
  await worker.ready({ timeoutMs: 10_000 });
  await waitFor(async () => {
    const { functions } = await worker.call<{ functions: Array<{ function_id: string }> }>('engine::functions::list', {});
    return functions.some((f) => f.function_id === 'skills::bad_path');
  });
  mcp = await httpMcp(engine);
});

afterAll(async () => {
  await mcp?.stop();
  await worker?.close();
  await engine?.stop();
});

let nextId = 1;
async function rpc(method: string, params: Record<string, unknown> = {}) {
  return (await post2026(mcp.url, nextId++, method, params, meta2026({}, 'skills-test'))).body;
}

const sha = (bytes: Buffer) => `sha256:${createHash('sha256').update(bytes).digest('hex')}`;

describe('skills from functions', () => {
  it('are declared and listed with complete manifests whose digests match what resources/read serves', async () => {
    const discover = await rpc('server/discover');
    expect(discover.result?.capabilities.extensions['io.modelcontextprotocol/skills']).toEqual({ directoryRead: true });
    expect(discover.result?.capabilities.resources).toBeTruthy();
    const listed = await rpc('skills/list');
    expect(listed.result).toMatchObject({ resultType: 'complete', cacheScope: 'public' });
    expect(typeof listed.result?.ttlMs).toBe('number');
    const skills = listed.result?.skills as Array<Record<string, any>>;
    // only the good, exposed skill: the hidden one is not opted in, the bad ones are refused
    expect(skills.map((s) => s.uri)).toEqual(['skill://team/release-notes/SKILL.md']);
    const [entry] = skills;
    expect(entry?.frontmatter).toEqual({ name: 'release-notes', description: 'Write release notes from merged changes' });
    const files = entry?.resources as Array<{ uri: string; digest: string; size: number }>;
    expect(files.map((f) => f.uri).sort()).toEqual([
      'skill://team/release-notes/SKILL.md',
      'skill://team/release-notes/assets/logo.png',
      'skill://team/release-notes/templates/short.md',
    ]);
    for (const file of files) {
      const read = await rpc('resources/read', { uri: file.uri });
      const content = read.result?.contents[0] as { text?: string; blob?: string; mimeType: string };
      const bytes = content.text !== undefined ? Buffer.from(content.text, 'utf8') : Buffer.from(content.blob as string, 'base64');
      expect(sha(bytes), file.uri).toBe(file.digest);
      expect(bytes.length).toBe(file.size);
    }
    const md = await rpc('resources/read', { uri: 'skill://team/release-notes/SKILL.md' });
    expect(md.result?.contents[0]).toMatchObject({ mimeType: 'text/markdown', text: SKILL_MD });
    const logo = await rpc('resources/read', { uri: 'skill://team/release-notes/assets/logo.png' });
    expect(logo.result?.contents[0]).toMatchObject({ mimeType: 'image/png', blob: LOGO.toString('base64') });
    // the function is told which skill it serves
    const short = await rpc('resources/read', { uri: 'skill://team/release-notes/templates/short.md' });
    expect(short.result?.contents[0].text).toBe('# Short (team/release-notes)\n');
    // SKILL.md is an ordinary resource in resources/list, named and described from the frontmatter
    const resources = (await rpc('resources/list')).result?.resources as Array<Record<string, unknown>>;
    expect(resources).toContainEqual({
      uri: 'skill://team/release-notes/SKILL.md',
      name: 'release-notes',
      description: 'Write release notes from merged changes',
      mimeType: 'text/markdown',
    });
  });

  it('gets a skill by URI and refuses what is not one with -32602', async () => {
    const got = await rpc('skills/get', { uri: 'skill://team/release-notes/SKILL.md' });
    expect(got.result?.skill.uri).toBe('skill://team/release-notes/SKILL.md');
    expect(got.result?.cacheScope).toBe('public');
    expect(got.result).not.toHaveProperty('nextCursor');
    for (const uri of ['skill://team/release-notes/templates/short.md', 'skill://nope/SKILL.md', 'skill://hidden/SKILL.md']) {
      const refused = await rpc('skills/get', { uri });
      expect(refused.error?.code, uri).toBe(-32602);
      expect(refused.error?.message).toContain('No skill is served at');
    }
    expect((await rpc('skills/get', {})).error?.code).toBe(-32602);
  });

  it('reads directories: direct children, subdirectories as inode/directory, -32602 for a file or an unknown one', async () => {
    const root = await rpc('resources/directory/read', { uri: 'skill://team/release-notes' });
    const children = root.result?.resources as Array<{ uri: string; name: string; mimeType: string }>;
    expect(children.map((c) => [c.name, c.mimeType]).sort()).toEqual([
      ['SKILL.md', 'text/markdown'],
      ['assets', 'inode/directory'],
      ['templates', 'inode/directory'],
    ]);
    const templates = await rpc('resources/directory/read', { uri: 'skill://team/release-notes/templates' });
    expect(templates.result?.resources).toEqual([
      {
        uri: 'skill://team/release-notes/templates/short.md',
        name: 'short.md',
        mimeType: 'text/markdown',
        size: Buffer.byteLength('# Short (team/release-notes)\n'),
      },
    ]);
    for (const uri of ['skill://team/release-notes/SKILL.md', 'skill://team/release-notes/nothing', 'skill://unknown', 'file:///etc']) {
      expect((await rpc('resources/directory/read', { uri })).error?.code, uri).toBe(-32602);
    }
  });

  it('refuses a bad skill with an error naming why, and never serves a file outside the skill', async () => {
    const escaping = await rpc('skills/get', { uri: 'skill://escape/SKILL.md' });
    expect(escaping.error?.code).toBe(-32603);
    expect(escaping.error?.message).toContain('must be relative');
    const misnamed = await rpc('skills/get', { uri: 'skill://misnamed/SKILL.md' });
    expect(misnamed.error?.message).toContain('must equal the path');
    const huge = await rpc('skills/get', { uri: 'skill://huge/SKILL.md' });
    expect(huge.error?.message).toContain('more than 512');
    const traversal = await rpc('resources/read', { uri: 'skill://team/release-notes/../../escape/SKILL.md' });
    expect(traversal.error?.code).toBe(-32602);
    // an invalid definition is not a skill at all: nothing is served at its path
    expect((await rpc('skills/get', { uri: 'skill://Bad Name/SKILL.md' })).error?.code).toBe(-32602);
  });

  it('serves the same files to a 2025-11-25 session', async () => {
    const client = await httpClient(mcp.url);
    try {
      const read = await client.readResource({ uri: 'skill://team/release-notes/SKILL.md' });
      expect(read.contents[0]).toMatchObject({ mimeType: 'text/markdown', text: SKILL_MD });
      const { resources } = await client.listResources();
      expect(resources.map((r) => r.uri)).toContain('skill://team/release-notes/SKILL.md');
    } finally {
      await client.close();
    }
  });
});
