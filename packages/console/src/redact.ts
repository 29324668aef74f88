/**
 * Remove user and password from URLs before they reach a log line or a close reason
 * (`ws://user:secret@host` → `ws://host`, issue 7 §5). Works on a bare URL and inside free text.
 */
export function redactUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (!parsed.username && !parsed.password) return url;
    parsed.username = '';
    parsed.password = '';
    return parsed.toString().replace(/\/$/, url.endsWith('/') ? '/' : '');
  } catch {
    return redactText(url);
  }
}

/** Redact every `scheme://user[:pass]@` in a text. */
export function redactText(text: string): string {
  return text.replace(/([a-z][a-z0-9+.-]*:\/\/)[^/\s:@]*(?::[^/\s@]*)?@/gi, '$1');
}
