// The one redaction helper lives in @eng/protocol (pure, imported by every surface); this path stays
// for existing importers (the console worker imports `@eng/console/redact`).
export { REDACTED, redactText, redactUrl } from '@eng/protocol';
