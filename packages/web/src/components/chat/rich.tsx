import { memo, type ReactNode, useMemo } from 'react';
import ReactMarkdown, { type Components } from 'react-markdown';
import remarkGfm from 'remark-gfm';
import { splitBlocks } from '../../lib/chat/markdown-blocks.ts';
import { CopyButton } from '../ui/copy-button.tsx';
import { highlight, warmUpHighlighter } from './highlight.ts';
import './rich.css';

/**
 * The chat's rich rendering, in its own lazily loaded chunk (react-markdown, remark-gfm and
 * highlight.js stay out of the initial bundle): Markdown with GFM and highlighted code blocks,
 * cut into blocks so a streaming answer re-parses only its last block, and highlighted JSON for
 * function inputs and outputs.
 */

function CodeBlock({ language, code }: { language?: string; code: string }) {
  const html = useMemo(() => highlight(code, language), [code, language]);
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

const components: Components = {
  pre: ({ children }) => <>{children}</>,
  code: ({ className, children }) => {
    const text = String(children ?? '');
    const language = /language-([\w+-]+)/.exec(className ?? '')?.[1]?.toLowerCase();
    // fenced blocks end with a newline (or carry a language); inline code does not
    if (!language && !text.includes('\n')) return <code className="chat-inline-code">{children}</code>;
    return <CodeBlock language={language} code={text.replace(/\n$/, '')} />;
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

const remarkPlugins = [remarkGfm];

const MarkdownBlock = memo(function MarkdownBlock({ text }: { text: string }) {
  return (
    <ReactMarkdown remarkPlugins={remarkPlugins} components={components}>
      {text}
    </ReactMarkdown>
  );
});

export const Markdown = memo(function Markdown({ text }: { text: string }) {
  const blocks = useMemo(() => splitBlocks(text), [text]);
  return (
    <div className="chat-md" data-testid="markdown">
      {blocks.map((block, i) => (
        // blocks only ever grow at the end, so the index is a stable key
        // biome-ignore lint/suspicious/noArrayIndexKey: see above
        <MarkdownBlock key={i} text={block} />
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
