import hljs from 'highlight.js/lib/core';
import bash from 'highlight.js/lib/languages/bash';
import css from 'highlight.js/lib/languages/css';
import diff from 'highlight.js/lib/languages/diff';
import go from 'highlight.js/lib/languages/go';
import javascript from 'highlight.js/lib/languages/javascript';
import json from 'highlight.js/lib/languages/json';
import markdown from 'highlight.js/lib/languages/markdown';
import python from 'highlight.js/lib/languages/python';
import rust from 'highlight.js/lib/languages/rust';
import sql from 'highlight.js/lib/languages/sql';
import typescript from 'highlight.js/lib/languages/typescript';
import xml from 'highlight.js/lib/languages/xml';
import yaml from 'highlight.js/lib/languages/yaml';

/**
 * highlight.js core with the languages a chat about an engine shows (deps.md: core plus the
 * languages needed, never the full bundle). Loaded with the rich chunk only.
 */
const LANGUAGES = { bash, css, diff, go, javascript, json, markdown, python, rust, sql, typescript, xml, yaml };
for (const [name, language] of Object.entries(LANGUAGES)) hljs.registerLanguage(name, language);
hljs.registerAliases(['sh', 'shell', 'zsh', 'console'], { languageName: 'bash' });
hljs.registerAliases(['js', 'jsx', 'mjs', 'cjs'], { languageName: 'javascript' });
hljs.registerAliases(['ts', 'tsx'], { languageName: 'typescript' });
hljs.registerAliases(['py'], { languageName: 'python' });
hljs.registerAliases(['yml'], { languageName: 'yaml' });
hljs.registerAliases(['html', 'svg'], { languageName: 'xml' });
hljs.registerAliases(['rs'], { languageName: 'rust' });
hljs.registerAliases(['md'], { languageName: 'markdown' });
hljs.registerAliases(['jsonc', 'json5'], { languageName: 'json' });

const cache = new Map<string, string | undefined>();
const CACHE_LIMIT = 2000;
/** Larger blocks are highlighted in idle time (highlightLater), not during a render. */
const SYNC_LIMIT = 3000;

/** Highlighted HTML of `code` (escaped by highlight.js), or undefined for an unknown language. Cached. */
export function highlight(code: string, language: string | undefined): string | undefined {
  if (!language || !hljs.getLanguage(language)) return undefined;
  const key = `${language}\u0000${code}`;
  if (cache.has(key)) return cache.get(key);
  let html: string | undefined;
  try {
    html = hljs.highlight(code, { language, ignoreIllegals: true }).value;
  } catch {
    html = undefined;
  }
  if (code.length > 100_000) return html;
  if (cache.size >= CACHE_LIMIT) cache.delete(cache.keys().next().value as string);
  cache.set(key, html);
  return html;
}

/** Whether `code` is known to the cache or small enough to highlight during a render (≈ a millisecond). */
export function highlightNow(code: string, language: string | undefined): boolean {
  if (!language || !hljs.getLanguage(language)) return true;
  return code.length <= SYNC_LIMIT || cache.has(`${language}\u0000${code}`);
}

const idle: (cb: () => void) => void =
  typeof window !== 'undefined' && 'requestIdleCallback' in window
    ? (cb) => window.requestIdleCallback(cb, { timeout: 1000 })
    : (cb) => setTimeout(cb, 30);

const queue: Array<{ code: string; language: string; done: (html: string | undefined) => void; cancelled: boolean }> = [];
let draining = false;

/**
 * Highlight a large block in idle time, one block per idle callback (a render shows it plain
 * meanwhile). Returns a cancel function.
 */
export function highlightLater(code: string, language: string, done: (html: string | undefined) => void): () => void {
  const job = { code, language, done, cancelled: false };
  queue.push(job);
  if (!draining) {
    draining = true;
    idle(drain);
  }
  return () => {
    job.cancelled = true;
  };
}

function drain(): void {
  let job = queue.shift();
  while (job?.cancelled) job = queue.shift();
  if (job) job.done(highlight(job.code, job.language));
  if (queue.length) idle(drain);
  else draining = false;
}

/**
 * Compile the grammars ahead of the first code block, one language per idle callback: highlight.js
 * compiles a grammar on its first use, which for TypeScript is a long task in the middle of a
 * streaming answer otherwise.
 */
export function warmUpHighlighter(languages: readonly string[], done?: () => void): void {
  const queue = [...languages];
  const next = () => {
    const language = queue.shift();
    if (!language) {
      done?.();
      return;
    }
    highlight('x', language);
    idle(next);
  };
  idle(next);
}
