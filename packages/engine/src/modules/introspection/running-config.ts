import { redactText } from '@eng/protocol';
import { isCollection, isMap, isPair, isScalar, isSeq, type Node, parseDocument, visit } from 'yaml';
import type { Scrub } from '../observability/scrub.ts';

// `engine::config::get` (issue 25 item 10): the configuration file this engine runs, for the
// console's Config page, which cannot know it (`eng start -c other.yaml`). The text is the file as
// written, so `${VAR}` stays a variable name rather than its value, and nothing secret leaves:
// values under credential-named keys, URL credentials and values the engine knows to be secrets.

export const REDACTED = '[REDACTED]';

// api_key, apiKey, OPENAI_API_KEY, client_secret, password, auth_token, credentials, … but not
// max_tokens or auth_function (TOKEN and AUTH only as whole words, and AUTH not at all)
const CREDENTIAL_KEY =
  /(?:^|_)(?:secrets?|passwords?|passwd|passphrase|credentials?|token|apikey|authorization|bearer|cookie)(?:_|$)|_key$/i;

export function isCredentialKey(key: string): boolean {
  return CREDENTIAL_KEY.test(key.replace(/([a-z0-9])([A-Z])/g, '$1_$2'));
}

const VARIABLE = /^\$\{([A-Za-z_][A-Za-z0-9_]*)(?::([^}]*))?\}$/;

/** A credential's value as shown: `${VAR}` as written (a name, not the secret), its default hidden. */
function hiddenValue(value: unknown): string {
  if (typeof value === 'string') {
    const variable = VARIABLE.exec(value.trim());
    if (variable) return variable[2] ? `\${${variable[1]}:${REDACTED}}` : `\${${variable[1]}}`;
  }
  return REDACTED;
}

function hideAll(node: unknown): void {
  if (isScalar(node)) {
    if (node.value !== null && node.value !== '') node.value = hiddenValue(node.value);
  } else if (isCollection(node)) {
    visit(node as Node, {
      Scalar(key, scalar) {
        if (key !== 'key' && scalar.value !== null && scalar.value !== '') scalar.value = hiddenValue(scalar.value);
      },
    });
  }
}

export interface RunningConfig {
  /** Absolute path of the file the engine loaded; null when it runs the default modules (no file). */
  path: string | null;
  /** The file as written, credentials redacted; null without a file. */
  text: string | null;
  /** Its `workers:` entries, parsed from the redacted text (`${VAR}` unexpanded); null when unparseable as written. */
  workers: Array<Record<string, unknown>> | null;
}

/** The redacted text and entries of a configuration file's text. */
export function redactConfig(text: string, scrub: Scrub | null = null): { text: string; workers: RunningConfig['workers'] } {
  const clean = (value: string) => {
    const out = redactText(value);
    return scrub ? scrub(out) : out;
  };
  const doc = parseDocument(text);
  if (doc.errors.length) {
    // `${VAR}` inside a flow mapping ({ port: ${P} }) is YAML only once substituted: redact line by line
    const lines = text.split('\n').map((line) => {
      const pair = /^(\s*(?:-\s+)?["']?)([A-Za-z0-9_.-]+)(["']?\s*:\s*)(\S.*)$/.exec(line);
      if (pair && isCredentialKey(pair[2] as string)) return `${pair[1]}${pair[2]}${pair[3]}${hiddenValue((pair[4] as string).trim())}`;
      return line;
    });
    return { text: clean(lines.join('\n')), workers: null };
  }
  visit(doc, {
    Pair(_, pair) {
      if (!isPair(pair) || !isScalar(pair.key) || !isCredentialKey(String(pair.key.value))) return undefined;
      hideAll(pair.value);
      return visit.SKIP;
    },
    Scalar(_, scalar) {
      if (typeof scalar.value === 'string') scalar.value = clean(scalar.value);
    },
  });
  // comments are kept: they often say why an entry is there
  const out = doc.toString();
  const root = doc.contents;
  let workers: RunningConfig['workers'] = null;
  if (isMap(root)) {
    const list = root.get('workers') ?? root.get('modules');
    workers = isSeq(list) ? (list.toJSON() as Array<Record<string, unknown>>) : [];
  } else if (root === null) {
    workers = [];
  }
  return { text: out, workers };
}
