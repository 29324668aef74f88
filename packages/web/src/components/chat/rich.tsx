import { memo, type ReactElement, type ReactNode, useEffect, useMemo, useState } from 'react';
import ReactMarkdown, { type Components } from 'react-markdown';
import remarkGfm from 'remark-gfm';
import { fencedCode, splitBlocks } from '../../lib/chat/markdown-blocks.ts';
import { CopyButton } from '../ui/copy-button.tsx';
import { highlight, highlightLater, highlightNow, warmUpHighlighter } from './highlight.ts';
import './rich.css';

/**
 * The chat's rich rendering, in its own lazily loaded chunk (react-markdown, remark-gfm and
 * highlight.js stay out of the initial bundle): Markdown with GFM and highlighted code blocks,
 * cut into blocks so a streaming answer re-parses only its last block, and highlighted JSON for
 * function inputs and outputs.
 */

/**
 * Highlighted HTML of a code block: none while it streams (it changes on every update and
 * highlighting it each time is what made a streaming answer slow), at once for a small or known
 * block, in idle time for a large one (shown plain meanwhile).
 */
function useHighlighted(code: string, language: string | undefined, streaming: boolean): string | undefined {
  const now = !streaming && highlightNow(code, language);
  const [late, setLate] = useState<{ code: string; language?: string; html?: string }>();
  useEffect(() => {
    if (streaming || now || !language) return;
    return highlightLater(code, language, (html) => setLate({ code, language, html }));
  }, [code, language, streaming, now]);
  if (streaming) return undefined;
  if (now) return highlight(code, language);
  return late && late.code === code && late.language === language ? late.html : undefined;
}

function CodeBlock({ language, code, streaming = false }: { language?: string; code: string; streaming?: boolean }) {
  const html = useHighlighted(code, language, streaming);
  return (
    <div className="chat-code group/code" data-testid="code-block" data-language={language ?? ''}>
      <div className="chat-code-bar">
        <span>{language || 'text'}</span>
        <CopyButton text={code} label="Copy code" className="opacity-70 group-hover/code:opacity-100" />
      </div>
      {html !== undefined ? (
        <pre className="hljs" data-highlighted="true">
          {/* biome-ignore lint/security/noDangerouslySetInnerHtml: highlight.js escapes the code it returns */}
          <code dangerouslySetInnerHTML={{ __html: html }} />
        </pre>
      ) : (
        <pre className="hljs">
          <code>{code}</code>
        </pre>
      )}
    </div>
  );
}

function componentsFor(streaming: boolean): Components {
  return {
    pre: ({ children }) => <>{children}</>,
    code: ({ className, children }) => {
      const text = String(children ?? '');
      const language = /language-([\w+-]+)/.exec(className ?? '')?.[1]?.toLowerCase();
      // fenced blocks end with a newline (or carry a language); inline code does not
      if (!language && !text.includes('\n')) return <code className="chat-inline-code">{children}</code>;
      return <CodeBlock language={language} code={text.replace(/\n$/, '')} streaming={streaming} />;
    },
    a: ({ href, children }) => (
      <a href={href} target="_blank" rel="noreferrer noopener">
        {children}
      </a>
    ),
    table: ({ children }) => (
      <div className="chat-table">
        <table>{children}</table>
      </div>
    ),
  };
}

const components = componentsFor(false);
const streamingComponents = componentsFor(true);
const remarkPlugins = [remarkGfm];

/**
 * What a finished block renders to, by its text: the elements react-markdown returns are plain
 * immutable values, so a row scrolled out and back in, or the same block met again, is not parsed
 * again.
 */
const rendered = new Map<string, ReactElement>();
const RENDERED_LIMIT = 3000;

function renderBlock(text: string, streaming: boolean): ReactElement {
  // a block that is one fenced code block needs no Markdown parse (the common case of a streaming code answer)
  const fenced = fencedCode(text);
  if (fenced) return <CodeBlock language={fenced.language} code={fenced.code} streaming={streaming} />;
  if (streaming) return ReactMarkdown({ children: text, remarkPlugins, components: streamingComponents });
  const known = rendered.get(text);
  if (known) return known;
  const out = ReactMarkdown({ children: text, remarkPlugins, components });
  if (rendered.size >= RENDERED_LIMIT) rendered.delete(rendered.keys().next().value as string);
  rendered.set(text, out);
  return out;
}

const MarkdownBlock = memo(function MarkdownBlock({ text, streaming }: { text: string; streaming: boolean }) {
  return useMemo(() => renderBlock(text, streaming), [text, streaming]);
});

/** Markdown cut into blocks; `streaming`: the last block is still growing (its code is not highlighted yet). */
export const Markdown = memo(function Markdown({ text, streaming = false }: { text: string; streaming?: boolean }) {
  const blocks = useMemo(() => splitBlocks(text), [text]);
  return (
    <div className="chat-md" data-testid="markdown">
      {blocks.map((block, i) => (
        // blocks only ever grow at the end, so the index is a stable key
        // biome-ignore lint/suspicious/noArrayIndexKey: see above
        <MarkdownBlock key={i} text={block} streaming={streaming && i === blocks.length - 1} />
      ))}
    </div>
  );
});

// warm the parser and the grammars while the user reads or types, not while an answer streams;
// `data-chat-rich="ready"` on <html> says it is done (the performance test waits for it)
if (typeof document !== 'undefined') {
  const idle = (cb: () => void) =>
    'requestIdleCallback' in window ? window.requestIdleCallback(cb, { timeout: 2000 }) : setTimeout(cb, 30);
  idle(() => {
    ReactMarkdown({ children: '# a\n\n**b** `c` [d](e)\n\n- f\n\n| g |\n|---|\n| h |\n\n```json\n{}\n```', remarkPlugins });
    warmUpHighlighter(['json', 'typescript', 'javascript', 'bash', 'python', 'yaml'], () => {
      document.documentElement.dataset.chatRich = 'ready';
    });
  });
}

function stringify(value: unknown): string {
  if (typeof value === 'string') return value;
  try {
    return JSON.stringify(value, null, 2) ?? 'null';
  } catch {
    return String(value);
  }
}

/** A JSON value, pretty-printed and highlighted (strings that are not JSON stay plain text). */
export const JsonBlock = memo(function JsonBlock({ value, label }: { value: unknown; label?: ReactNode }) {
  const text = stringify(value);
  const html = useMemo(() => (typeof value === 'string' ? undefined : highlight(text, 'json')), [text, value]);
  return (
    <div className="chat-code" data-testid="json-block">
      <div className="chat-code-bar">
        <span>{label ?? (typeof value === 'string' ? 'text' : 'json')}</span>
        <CopyButton text={text} label="Copy" />
      </div>
      {html !== undefined ? (
        <pre className="hljs" data-highlighted="true">
          {/* biome-ignore lint/security/noDangerouslySetInnerHtml: highlight.js escapes the code it returns */}
          <code dangerouslySetInnerHTML={{ __html: html }} />
        </pre>
      ) : (
        <pre className="hljs">
          <code>{text}</code>
        </pre>
      )}
    </div>
  );
});
