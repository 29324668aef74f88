/**
 * Credentials in URLs never leave a process (issue 7 §5, issue 12 item 11): pure helpers shared by
 * every surface (eng-console, the console worker, eng-mcp) for log lines, responses and pages.
 *
 * - userinfo is dropped whole (`ws://user:secret@host` → `ws://host`): a user name is often a
 *   secret too (`http://<token>@host`), and dropping both is what the console worker always did;
 * - the value of a sensitive query parameter (token, key, secret, password, auth, …) becomes `***`.
 */

export const REDACTED = '***';

/** Query parameter names whose value is a secret (matched anywhere in the name, any case). */
const SENSITIVE_NAME = /token|secret|passw|pwd|auth|key|credential|signature|session|cookie|jwt|bearer|^sig$|^code$/i;

// `scheme://` then everything up to the LAST `@` of the authority (WHATWG URL parsing takes the
// last one too, so a raw `@` inside a password cannot leave its tail behind)
const USERINFO = /([a-z][a-z0-9+.-]*:\/\/)[^\s/?#"'<>`\\]*@/gi;
// `?name=value` / `&name=value` (also `;`); the value ends at the next separator, quote or space
const QUERY_PARAM = /([?&;])([^=&;#\s"'<>`\\]+)=([^&;#\s"'<>`\\]*)/g;

/** Redact every URL credential in a free text (log line, error message, close reason). */
export function redactText(text: string): string {
  if (typeof text !== 'string') return text;
  let out = text.includes('://') ? text.replace(USERINFO, '$1') : text;
  if (out.includes('=')) {
    out = out.replace(QUERY_PARAM, (whole, sep: string, name: string, value: string) =>
      value !== '' && value !== REDACTED && SENSITIVE_NAME.test(safeDecode(name)) ? `${sep}${name}=${REDACTED}` : whole,
    );
  }
  return out;
}

/** Redact one URL (same rules; a value that is not a URL is treated as text). */
export function redactUrl(url: string): string {
  return redactText(url);
}

function safeDecode(name: string): string {
  try {
    return decodeURIComponent(name.replace(/\+/g, ' '));
  } catch {
    return name;
  }
}
