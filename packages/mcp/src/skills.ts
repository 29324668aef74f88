import { createHash } from 'node:crypto';
import { parse as parseYaml } from 'yaml';
import type { FunctionRow } from './exposure.ts';
import { ErrorCode, RpcError } from './rpc-error.ts';

// The skills extension (io.modelcontextprotocol/skills, SEP-2640) on engine functions (mcp README
// §Skills). A function whose metadata has `"mcp.skill": "<skill-path>"` (or `{path}`) serves one
// skill: called with `{skill: <path>}`, it answers the skill's files, `{"SKILL.md": text,
// "templates/a.md": text, "logo.png": {blob, mimeType}}` (or a string: a one-file skill). eng-mcp
// publishes them as `skill://<path>/<file>` resources with digests, lists the skill in
// `skills/list`, answers `skills/get` and `resources/directory/read`. Bounds are the extension's
// own (512 files, 16 MiB a skill).

export const SKILLS_EXTENSION = 'io.modelcontextprotocol/skills';
export const MAX_SKILL_FILES = 512;
export const MAX_SKILL_BYTES = 16 * 1024 * 1024;
const MAX_PATH = 512;
const DIRECTORY = 'inode/directory';
/** Agent Skills naming: lowercase letters, digits and single hyphens, at most 64 characters. */
const SKILL_NAME = /^[a-z0-9]+(-[a-z0-9]+)*$/;
const SEGMENT = /^[A-Za-z0-9._~-]+$/;

const isObject = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === 'object' && !Array.isArray(value);

/** A skill as a function's metadata defines it (no content read yet). */
export interface FunctionSkill {
  functionId: string;
  /** `<skill-path>`: segments, the last one the skill's name. */
  path: string;
  name: string;
  /** `skill://<path>`: the skill's root directory resource. */
  root: string;
  /** `skill://<path>/SKILL.md`. */
  uri: string;
  description: string;
}

export interface SkillFile {
  path: string;
  uri: string;
  bytes: Buffer;
  /** Set for a text file. */
  text?: string;
  mimeType: string;
}

/** A skill's content as its function answered it, checked. */
export interface SkillContent {
  skill: FunctionSkill;
  frontmatter: Record<string, unknown>;
  files: SkillFile[];
}

/** `"mcp.skill"` metadata as a skill, or why it cannot be one. */
export function skillOf(row: FunctionRow, spec: unknown): FunctionSkill | string {
  const id = row.function_id;
  const path = typeof spec === 'string' ? spec : isObject(spec) && typeof spec.path === 'string' ? spec.path : undefined;
  if (path === undefined) return `${id}: "mcp.skill" must be the skill's path ("refunds", "acme/billing/refunds") or {path}`;
  const segments = path.split('/');
  if (path.length > MAX_PATH || segments.some((s) => !SEGMENT.test(s) || s === '.' || s === '..')) {
    return `${id}: "mcp.skill" path "${path.slice(0, 100)}" must be /-separated URI segments (letters, digits, . _ ~ -)`;
  }
  const name = segments.at(-1) as string;
  if (name.length > 64 || !SKILL_NAME.test(name)) {
    return `${id}: the skill name "${name}" (the path's last segment) must be lowercase letters, digits and hyphens, at most 64`;
  }
  const root = `skill://${path}`;
  const description =
    (isObject(spec) && typeof spec.description === 'string' && spec.description) ||
    (typeof row.description === 'string' && row.description) ||
    `Skill ${name}`;
  return { functionId: id, path, name, root, uri: `${root}/SKILL.md`, description };
}

const MIME: Record<string, string> = {
  md: 'text/markdown',
  txt: 'text/plain',
  json: 'application/json',
  yaml: 'application/yaml',
  yml: 'application/yaml',
  py: 'text/x-python',
  js: 'text/javascript',
  ts: 'text/x-typescript',
  sh: 'text/x-shellscript',
  html: 'text/html',
  csv: 'text/csv',
  png: 'image/png',
  jpg: 'image/jpeg',
  svg: 'image/svg+xml',
  pdf: 'application/pdf',
};

function mimeOf(path: string, text: boolean): string {
  const ext = path.slice(path.lastIndexOf('.') + 1).toLowerCase();
  return MIME[ext] ?? (text ? 'text/plain' : 'application/octet-stream');
}

/** The YAML frontmatter at the top of a SKILL.md, or why there is none usable. */
export function frontmatterOf(text: string): Record<string, unknown> | string {
  const match = (text.charCodeAt(0) === 0xfeff ? text.slice(1) : text).match(/^---\r?\n([\s\S]*?)\r?\n---[ \t]*(?:\r?\n|$)/);
  if (!match) return 'SKILL.md does not begin with YAML frontmatter (---)';
  let value: unknown;
  try {
    value = parseYaml(match[1] as string, { maxAliasCount: 100 });
  } catch (err) {
    return `SKILL.md frontmatter is not valid YAML: ${(err as Error).message.split('\n')[0]}`;
  }
  if (!isObject(value)) return 'SKILL.md frontmatter is not a mapping';
  if (typeof value.name !== 'string' || typeof value.description !== 'string') {
    return 'SKILL.md frontmatter needs string name and description';
  }
  return value;
}

/** A function's answer as the skill's files, checked against the extension's rules and limits. */
export function skillContentOf(skill: FunctionSkill, answer: unknown): SkillContent | string {
  const where = `skill ${skill.uri} (function ${skill.functionId})`;
  const raw: Record<string, unknown> = typeof answer === 'string' ? { 'SKILL.md': answer } : isObject(answer) ? answer : {};
  const entries = Object.entries(isObject(raw.files) && Object.keys(raw).length === 1 ? raw.files : raw);
  if (entries.length === 0) return `${where}: the function answered no files (a string, or {"SKILL.md": text, …})`;
  if (entries.length > MAX_SKILL_FILES) return `${where}: ${entries.length} files, more than ${MAX_SKILL_FILES}`;
  const files: SkillFile[] = [];
  let total = 0;
  for (const [path, value] of entries) {
    const segments = path.split('/');
    if (path.length > MAX_PATH || segments.some((s) => s === '' || s === '.' || s === '..' || !SEGMENT.test(s))) {
      return `${where}: file path "${path.slice(0, 100)}" must be relative, /-separated, without . or .. segments`;
    }
    let file: SkillFile;
    const uri = `${skill.root}/${path}`;
    if (typeof value === 'string') {
      file = { path, uri, bytes: Buffer.from(value, 'utf8'), text: value, mimeType: mimeOf(path, true) };
    } else if (isObject(value) && (typeof value.text === 'string') !== (typeof value.blob === 'string')) {
      const mimeType = typeof value.mimeType === 'string' ? value.mimeType : mimeOf(path, typeof value.text === 'string');
      file =
        typeof value.text === 'string'
          ? { path, uri, bytes: Buffer.from(value.text, 'utf8'), text: value.text, mimeType }
          : { path, uri, bytes: Buffer.from(value.blob as string, 'base64'), mimeType };
    } else {
      return `${where}: file "${path}" must be a string, {text} or {blob} (base64)`;
    }
    total += file.bytes.length;
    if (total > MAX_SKILL_BYTES) return `${where}: its files add up to more than ${MAX_SKILL_BYTES} bytes`;
    files.push(file);
  }
  const manifest = files.find((f) => f.path === 'SKILL.md');
  if (!manifest || manifest.text === undefined) return `${where}: no SKILL.md text among its files`;
  manifest.mimeType = 'text/markdown';
  const frontmatter = frontmatterOf(manifest.text);
  if (typeof frontmatter === 'string') return `${where}: ${frontmatter}`;
  if (frontmatter.name !== skill.name) {
    return `${where}: its frontmatter name "${String(frontmatter.name).slice(0, 64)}" must equal the path's last segment "${skill.name}"`;
  }
  // directories and files must not collide ("a" a file and "a/b" another)
  const paths = new Set(files.map((f) => f.path));
  for (const f of files) {
    const segments = f.path.split('/');
    for (let i = 1; i < segments.length; i++) {
      if (paths.has(segments.slice(0, i).join('/'))) return `${where}: "${segments.slice(0, i).join('/')}" is both a file and a directory`;
    }
  }
  return { skill, frontmatter, files };
}

/** The extension's `Skill` entry: frontmatter verbatim, every file with its digest and size. */
export function skillEntry(content: SkillContent): Record<string, unknown> {
  return {
    uri: content.skill.uri,
    frontmatter: content.frontmatter,
    resources: content.files.map((f) => ({
      uri: f.uri,
      digest: `sha256:${createHash('sha256').update(f.bytes).digest('hex')}`,
      size: f.bytes.length,
    })),
  };
}

/** The skill a URI falls in (the deepest one, as skills may nest), with the path inside it. */
export function skillAt(uri: string, skills: FunctionSkill[]): { skill: FunctionSkill; inner: string } | undefined {
  let best: FunctionSkill | undefined;
  for (const skill of skills) {
    if ((uri === skill.root || uri.startsWith(`${skill.root}/`)) && (!best || skill.root.length > best.root.length)) best = skill;
  }
  return best ? { skill: best, inner: uri.slice(best.root.length + 1) } : undefined;
}

/** `resources/read` of one file of a skill. */
export function skillFileContents(content: SkillContent, uri: string): Array<Record<string, unknown>> | undefined {
  const file = content.files.find((f) => f.uri === uri);
  if (!file) return undefined;
  return file.text !== undefined
    ? [{ uri, mimeType: file.mimeType, text: file.text }]
    : [{ uri, mimeType: file.mimeType, blob: file.bytes.toString('base64') }];
}

/**
 * `resources/directory/read`: the direct children of a directory of a skill (its root or a
 * subdirectory), files with their metadata, subdirectories as `inode/directory`. A URI that is a
 * file, or no directory of the skill, is -32602.
 */
export function directoryChildren(content: SkillContent, uri: string): Array<Record<string, unknown>> {
  const dir = uri === content.skill.root ? '' : uri.slice(content.skill.root.length + 1);
  const prefix = dir === '' ? '' : `${dir}/`;
  const children = new Map<string, Record<string, unknown>>();
  for (const f of content.files) {
    if (!f.path.startsWith(prefix)) continue;
    const rest = f.path.slice(prefix.length);
    const slash = rest.indexOf('/');
    if (slash === -1) {
      children.set(rest, { uri: f.uri, name: rest, mimeType: f.mimeType, size: f.bytes.length });
    } else {
      const name = rest.slice(0, slash);
      if (!children.has(name)) children.set(name, { uri: `${content.skill.root}/${prefix}${name}`, name, mimeType: DIRECTORY });
    }
  }
  if (children.size === 0) throw new RpcError(ErrorCode.InvalidParams, `${uri} is not a directory resource`);
  return [...children.values()];
}
