import { redactText } from '@eng/protocol';
import { BlobResourceContentsSchema, GetPromptResultSchema, TextResourceContentsSchema } from '@modelcontextprotocol/sdk/types.js';
import type { EngineView } from './engine-view.ts';
import { type ExposurePolicy, type FunctionRow, isExposed, toolName } from './exposure.ts';
import { type Invoker, NOT_RUN } from './invoker.ts';
import type { Log } from './log.ts';
import { paginate } from './pagination.ts';
import { ErrorCode, RpcError } from './rpc-error.ts';
import {
  directoryChildren,
  type FunctionSkill,
  type SkillContent,
  skillAt,
  skillContentOf,
  skillEntry,
  skillFileContents,
  skillOf,
} from './skills.ts';
import { engineFailureText } from './tool-result.ts';

// Resources, resource templates and prompts contributed by engine functions (mcp README §Resources
// and prompts from functions). A function whose metadata has `"mcp.resource"` or `"mcp.prompt"`
// (flat dotted keys, like `"mcp.expose"`) is read or rendered by calling it. The exposure gate and
// the hard floor apply exactly as to tools: only opted-in functions outside the floor (and in the
// --tier) contribute, and each read re-checks at dispatch like a tool call.

export const RESOURCE_NOT_FOUND = -32002;

const isObject = (value: unknown): value is Record<string, unknown> => value !== null && typeof value === 'object' && !Array.isArray(value);
const text = (value: unknown): string | undefined => (typeof value === 'string' && value.trim() !== '' ? value : undefined);
const ABSOLUTE_URI = /^[a-zA-Z][a-zA-Z0-9+.-]*:/;

export interface FunctionResource {
  functionId: string;
  /** A fixed URI, or undefined for a template. */
  uri?: string;
  uriTemplate?: string;
  /** Matches a URI of the template; groups are the variables in order. */
  pattern?: RegExp;
  variables: string[];
  name: string;
  title?: string;
  description: string;
  mimeType?: string;
}

export interface PromptArgument {
  name: string;
  description?: string;
  required: boolean;
}

export interface FunctionPrompt {
  functionId: string;
  name: string;
  title?: string;
  description: string;
  arguments: PromptArgument[];
}

export interface Contributions {
  resources: FunctionResource[];
  templates: FunctionResource[];
  prompts: FunctionPrompt[];
  /** Skills (`"mcp.skill"`, skills.ts); each one's SKILL.md is also among `resources`. */
  skills: FunctionSkill[];
  /** Definitions that were skipped, and why (logged once each). */
  problems: string[];
}

const escapeRegex = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** RFC 6570 level 1-2 templates: `{var}` matches one segment (no `/`, `?`, `#`), `{+var}` anything. */
function compileTemplate(template: string): { pattern: RegExp; variables: string[] } | string {
  const variables: string[] = [];
  let source = '^';
  let rest = template;
  for (;;) {
    const open = rest.indexOf('{');
    if (open === -1) break;
    const close = rest.indexOf('}', open);
    if (close === -1) return `unclosed "{" in uri_template "${template}"`;
    source += escapeRegex(rest.slice(0, open));
    const expression = rest.slice(open + 1, close);
    const reserved = expression.startsWith('+');
    const name = reserved ? expression.slice(1) : expression;
    if (!/^[A-Za-z0-9_]+$/.test(name))
      return `unsupported expression "{${expression}}" in uri_template "${template}" (use {name} or {+name})`;
    if (variables.includes(name)) return `variable "${name}" appears twice in uri_template "${template}"`;
    variables.push(name);
    source += reserved ? '(.+?)' : '([^/?#]+)';
    rest = rest.slice(close + 1);
  }
  if (rest.includes('}')) return `stray "}" in uri_template "${template}"`;
  if (variables.length === 0) return `uri_template "${template}" has no {variable}; use uri for a fixed resource`;
  return { pattern: new RegExp(`${source}${escapeRegex(rest)}$`), variables };
}

function resourceOf(row: FunctionRow, spec: unknown): FunctionResource | string {
  const id = row.function_id;
  if (!isObject(spec)) return `${id}: "mcp.resource" must be an object ({uri | uri_template, name?, mime_type?, …})`;
  const uri = text(spec.uri);
  const template = text(spec.uri_template);
  if ((uri === undefined) === (template === undefined)) return `${id}: "mcp.resource" needs exactly one of uri and uri_template`;
  const address = (uri ?? template) as string;
  if (!ABSOLUTE_URI.test(address)) return `${id}: "mcp.resource" ${uri ? 'uri' : 'uri_template'} "${address}" is not an absolute URI`;
  if (address.toLowerCase().startsWith('eng:')) return `${id}: the eng:// scheme belongs to eng-mcp's own resources`;
  const base = {
    functionId: id,
    name: text(spec.name) ?? toolName(id),
    title: text(spec.title),
    description: text(spec.description) ?? text(row.description) ?? `Resource read by function ${id}`,
    mimeType: text(spec.mime_type),
  };
  if (uri !== undefined) return { ...base, uri, variables: [] };
  const compiled = compileTemplate(template as string);
  if (typeof compiled === 'string') return `${id}: ${compiled}`;
  return { ...base, uriTemplate: template, pattern: compiled.pattern, variables: compiled.variables };
}

function promptOf(row: FunctionRow, spec: unknown): FunctionPrompt | string {
  const id = row.function_id;
  const body = spec === true ? {} : spec;
  if (!isObject(body)) return `${id}: "mcp.prompt" must be an object ({name?, description?, arguments?}) or true`;
  const args: PromptArgument[] = [];
  if (body.arguments !== undefined) {
    if (!Array.isArray(body.arguments)) return `${id}: "mcp.prompt" arguments must be an array`;
    for (const arg of body.arguments) {
      const name = isObject(arg) ? text(arg.name) : undefined;
      if (!name) return `${id}: every "mcp.prompt" argument needs a name`;
      if (args.some((a) => a.name === name)) return `${id}: "mcp.prompt" argument "${name}" appears twice`;
      const description = text((arg as Record<string, unknown>).description);
      args.push({ name, ...(description ? { description } : {}), required: (arg as Record<string, unknown>).required === true });
    }
  }
  const name = body.name === undefined ? toolName(id) : text(body.name);
  if (!name) return `${id}: "mcp.prompt" name must be a non-empty string`;
  return {
    functionId: id,
    name,
    title: text(body.title),
    description: text(body.description) ?? text(row.description) ?? `Prompt rendered by function ${id}`,
    arguments: args,
  };
}

/**
 * What the exposed functions contribute, in engine order; a later definition of a URI, template or
 * prompt name already taken (by eng-mcp's own or an earlier function's) is skipped as a problem.
 */
export function contributionsOf(rows: FunctionRow[], policy: ExposurePolicy, reserved: { prompts: string[] }): Contributions {
  const out: Contributions = { resources: [], templates: [], prompts: [], skills: [], problems: [] };
  const addresses = new Set<string>();
  const promptNames = new Set(reserved.prompts);
  for (const row of rows) {
    const metadata = row.metadata;
    if (
      !metadata ||
      (metadata['mcp.resource'] === undefined && metadata['mcp.prompt'] === undefined && metadata['mcp.skill'] === undefined)
    )
      continue;
    if (!isExposed(row, policy)) continue;
    if (metadata['mcp.skill'] !== undefined) {
      const skill = skillOf(row, metadata['mcp.skill']);
      if (typeof skill === 'string') out.problems.push(skill);
      else if (addresses.has(skill.uri) || out.skills.some((s) => s.root === skill.root)) {
        out.problems.push(`${row.function_id}: the skill ${skill.root} is already defined by another function`);
      } else {
        addresses.add(skill.uri);
        out.skills.push(skill);
        // its SKILL.md is an ordinary resource too (spec: name and description from the frontmatter)
        out.resources.push({
          functionId: skill.functionId,
          uri: skill.uri,
          variables: [],
          name: skill.name,
          description: skill.description,
          mimeType: 'text/markdown',
        });
      }
    }
    if (metadata['mcp.resource'] !== undefined) {
      const resource = resourceOf(row, metadata['mcp.resource']);
      if (typeof resource === 'string') out.problems.push(resource);
      else {
        const address = resource.uri ?? (resource.uriTemplate as string);
        if (addresses.has(address)) out.problems.push(`${row.function_id}: ${address} is already defined by another function`);
        else {
          addresses.add(address);
          (resource.uri ? out.resources : out.templates).push(resource);
        }
      }
    }
    if (metadata['mcp.prompt'] !== undefined) {
      const prompt = promptOf(row, metadata['mcp.prompt']);
      if (typeof prompt === 'string') out.problems.push(prompt);
      else if (promptNames.has(prompt.name)) out.problems.push(`${row.function_id}: prompt name "${prompt.name}" is already taken`);
      else {
        promptNames.add(prompt.name);
        out.prompts.push(prompt);
      }
    }
  }
  return out;
}

/** As resources/list shows them. */
export function listedResource(r: FunctionResource) {
  return {
    uri: r.uri as string,
    name: r.name,
    ...(r.title ? { title: r.title } : {}),
    description: r.description,
    ...(r.mimeType ? { mimeType: r.mimeType } : {}),
  };
}

export function listedTemplate(r: FunctionResource) {
  return {
    uriTemplate: r.uriTemplate as string,
    name: r.name,
    ...(r.title ? { title: r.title } : {}),
    description: r.description,
    ...(r.mimeType ? { mimeType: r.mimeType } : {}),
  };
}

export function listedPrompt(p: FunctionPrompt) {
  return { name: p.name, ...(p.title ? { title: p.title } : {}), description: p.description, arguments: p.arguments };
}

type Contents = Array<Record<string, unknown> & { uri: string }>;

/** A function's answer as `resources/read` contents (mcp README: string, {text|blob}, {contents}, or JSON). */
export function resourceContents(uri: string, mimeType: string | undefined, result: unknown): Contents {
  if (typeof result === 'string') return [{ uri, mimeType: mimeType ?? 'text/plain', text: result }];
  const one = (item: Record<string, unknown>) => {
    const filled: Record<string, unknown> & { uri: string } = { ...item, uri: typeof item.uri === 'string' ? item.uri : uri };
    if (mimeType && filled.mimeType === undefined) filled.mimeType = mimeType;
    return TextResourceContentsSchema.safeParse(filled).success || BlobResourceContentsSchema.safeParse(filled).success
      ? filled
      : undefined;
  };
  if (isObject(result) && Array.isArray(result.contents) && Object.keys(result).every((k) => k === 'contents' || k === '_meta')) {
    const items = result.contents.map((item) => (isObject(item) ? one(item) : undefined));
    if (items.length > 0 && items.every(Boolean)) return items as Contents;
  }
  if (isObject(result) && (typeof result.text === 'string' || typeof result.blob === 'string')) {
    const allowed = new Set(['text', 'blob', 'mimeType', 'uri', '_meta']);
    if (Object.keys(result).every((k) => allowed.has(k)) && !(typeof result.text === 'string' && typeof result.blob === 'string')) {
      const item = one(result);
      if (item) return [item as Contents[number]];
    }
  }
  let json: string;
  try {
    json = JSON.stringify(result ?? null, null, 2) ?? 'null';
  } catch {
    json = String(result);
  }
  return [{ uri, mimeType: mimeType ?? 'application/json', text: json }];
}

/** A function's answer as a `prompts/get` result (string, {messages, description?}, or JSON text). */
export function promptResult(prompt: FunctionPrompt, result: unknown): { description: string; messages: unknown[] } {
  const user = (text: string) => [{ role: 'user', content: { type: 'text', text } }];
  if (typeof result === 'string') return { description: prompt.description, messages: user(result) };
  if (isObject(result) && GetPromptResultSchema.safeParse(result).success) {
    return { ...result, description: typeof result.description === 'string' ? result.description : prompt.description } as {
      description: string;
      messages: unknown[];
    };
  }
  if (Array.isArray(result) && GetPromptResultSchema.safeParse({ messages: result }).success) {
    return { description: prompt.description, messages: result };
  }
  let json: string;
  try {
    json = JSON.stringify(result ?? null, null, 2) ?? 'null';
  } catch {
    json = String(result);
  }
  return { description: prompt.description, messages: user(json) };
}

export interface ContributionDeps {
  view: EngineView;
  policy: ExposurePolicy;
  invoker: Invoker;
  log: Log;
  reservedPrompts: string[];
  /** Told when a listing went out without function contributions because the engine was unreachable. */
  onDegradedList?: () => void;
}

export class ContributionService {
  private reported = new Set<string>();

  constructor(private readonly deps: ContributionDeps) {}

  /** The contributions of the functions as the engine lists them now (none while it is unreachable). */
  async list(): Promise<Contributions> {
    if (!(await this.deps.view.waitConnected())) {
      this.deps.onDegradedList?.();
      return { resources: [], templates: [], prompts: [], skills: [], problems: [] };
    }
    let rows: FunctionRow[];
    try {
      rows = await this.deps.view.listFunctions();
    } catch (err) {
      throw new RpcError(ErrorCode.InternalError, `cannot list functions from the eng engine: ${redactText((err as Error).message)}`);
    }
    return this.of(rows);
  }

  /** Parse rows (the watcher's listing too); each skipped definition is logged once. */
  of(rows: FunctionRow[]): Contributions {
    const found = contributionsOf(rows, this.deps.policy, { prompts: this.deps.reservedPrompts });
    for (const problem of found.problems) {
      if (this.reported.has(problem)) continue;
      if (this.reported.size > 1000) this.reported.clear();
      this.reported.add(problem);
      this.deps.log.warn(`skipped an MCP resource, prompt or skill definition: ${problem}`);
    }
    return found;
  }

  /** `resources/read` of a function resource; undefined when no function defines the URI. */
  async read(uri: string, callMeta: Record<string, unknown> = {}): Promise<{ contents: Contents } | undefined> {
    await this.connected(`cannot read ${uri}`);
    const { resources, templates, skills } = await this.list();
    const inSkill = skillAt(uri, skills);
    if (inSkill) {
      const contents = skillFileContents(await this.skillContent(inSkill.skill, callMeta), uri);
      return contents ? { contents: contents as Contents } : undefined;
    }
    let resource = resources.find((r) => r.uri === uri);
    let variables: Record<string, string> = {};
    if (!resource) {
      for (const candidate of templates) {
        const match = candidate.pattern?.exec(uri);
        if (!match) continue;
        resource = candidate;
        variables = Object.fromEntries(candidate.variables.map((name, i) => [name, safeDecode(match[i + 1] as string)]));
        break;
      }
    }
    if (!resource) return undefined;
    const result = await this.invoke(resource.functionId, { ...variables, uri }, { ...callMeta, kind: 'resource', uri }, () => {
      throw new RpcError(RESOURCE_NOT_FOUND, `Resource not found: ${uri}`, { uri });
    });
    return { contents: resourceContents(uri, resource.mimeType, result) };
  }

  /** `prompts/get` of a function prompt; undefined when no function defines the name. */
  async getPrompt(
    name: string,
    args: Record<string, string> | undefined,
    callMeta: Record<string, unknown> = {},
  ): Promise<{ description: string; messages: unknown[] } | undefined> {
    await this.connected(`cannot render the prompt ${name}`);
    const prompt = (await this.list()).prompts.find((p) => p.name === name);
    if (!prompt) return undefined;
    const values = args ?? {};
    for (const arg of prompt.arguments) {
      if (arg.required && (typeof values[arg.name] !== 'string' || values[arg.name]?.trim() === '')) {
        throw new RpcError(ErrorCode.InvalidParams, `Missing required argument: ${arg.name}`);
      }
    }
    const result = await this.invoke(prompt.functionId, values, { ...callMeta, kind: 'prompt', prompt: name }, () => {
      throw new RpcError(ErrorCode.InvalidParams, `Unknown prompt: ${name}`);
    });
    return promptResult(prompt, result);
  }

  /** A skill's files, from its function; a function that answers no valid skill is -32603 naming why. */
  private async skillContent(skill: FunctionSkill, callMeta: Record<string, unknown> = {}): Promise<SkillContent> {
    const answer = await this.invoke(skill.functionId, { skill: skill.path }, { ...callMeta, kind: 'skill', skill: skill.path }, () => {
      throw new RpcError(ErrorCode.InvalidParams, `No skill is served at ${skill.uri}`);
    });
    const content = skillContentOf(skill, answer);
    if (typeof content === 'string') {
      this.deps.log.warn(content);
      throw new RpcError(ErrorCode.InternalError, content);
    }
    return content;
  }

  /** `skills/list`: a page of skills (20 functions called at most), entries complete with digests. */
  async listSkills(cursor: unknown): Promise<{ skills: Record<string, unknown>[]; nextCursor?: string }> {
    await this.connected('cannot list skills');
    const { page, nextCursor } = paginate('skills', (await this.list()).skills, cursor, 20);
    const settled = await Promise.allSettled(page.map((skill) => this.skillContent(skill)));
    // a skill whose function fails is left out of the listing (logged), the others are served
    const skills = settled.flatMap((r) => (r.status === 'fulfilled' ? [skillEntry(r.value)] : []));
    return nextCursor ? { skills, nextCursor } : { skills };
  }

  /** `skills/get`: the entry of the skill whose SKILL.md is `uri`; -32602 for any other URI. */
  async getSkill(uri: string): Promise<Record<string, unknown>> {
    await this.connected(`cannot get the skill ${uri}`);
    const skill = (await this.list()).skills.find((s) => s.uri === uri);
    if (!skill) throw new RpcError(ErrorCode.InvalidParams, `No skill is served at ${uri.slice(0, 512)}`);
    return skillEntry(await this.skillContent(skill));
  }

  /** `resources/directory/read` of a skill's directory (its root or a subdirectory). */
  async readDirectory(uri: string, cursor: unknown): Promise<{ resources: Record<string, unknown>[]; nextCursor?: string }> {
    await this.connected(`cannot read the directory ${uri}`);
    const inSkill = skillAt(uri, (await this.list()).skills);
    if (!inSkill) throw new RpcError(ErrorCode.InvalidParams, `${uri.slice(0, 512)} is not a directory resource`);
    const children = directoryChildren(await this.skillContent(inSkill.skill), uri);
    const { page, nextCursor } = paginate('directory', children, cursor);
    return nextCursor ? { resources: page, nextCursor } : { resources: page };
  }

  /** The fail-fast rule of every path: at most a second's wait for an engine that is not there. */
  private async connected(what: string): Promise<void> {
    if (!(await this.deps.view.waitConnected())) throw new RpcError(ErrorCode.InternalError, `${what}: the eng engine is not connected`);
  }

  /** Through the same paths as a tool call: guarded on an eng engine, else gate + call. */
  private async invoke(functionId: string, payload: unknown, about: Record<string, unknown>, gone: () => never): Promise<unknown> {
    const { invoker } = this.deps;
    const metadata = { mcp: about };
    const failed = (err: unknown): never => {
      throw new RpcError(ErrorCode.InternalError, `function ${functionId} failed: ${engineFailureText(err).replace(/^Error: /, '')}`);
    };
    if (invoker.fastRow(functionId)) {
      const result = await invoker.guarded(functionId, payload, { metadata }).catch(failed);
      if (result !== NOT_RUN) return result;
    }
    const gate = await invoker.gate(functionId);
    if (!gate.ok) {
      if (gate.reason === 'unverified') throw new RpcError(ErrorCode.InternalError, gate.text);
      gone();
    }
    return invoker.direct(functionId, payload, { metadata }).catch(failed);
  }
}

function safeDecode(value: string): string {
  try {
    return decodeURIComponent(value);
  } catch {
    return value;
  }
}
