import { describe, expect, it } from 'vitest';
import {
  formatTestCommand,
  globMatch,
  isCallerTestCmdRefusal,
  landTestGate,
  withoutCode,
} from '../src/components/worktrees/land-test-gate.ts';

// The console's land dialog and the worktree worker's `worktree` configuration entry
// (packages/worktree/README.md): a caller's test_cmd only with gates.allow_caller_test_cmd, else
// the repository's test_commands entry; the worker's W500 for a caller's command told apart.

describe('land test gate', () => {
  it('reads gates.allow_caller_test_cmd (off unless true) and the first test_commands key that matches', () => {
    expect(landTestGate(null, '/src/app')).toEqual({ known: false, allowCaller: false });
    expect(landTestGate({ worktree_root: '/wt' }, '/src/app')).toEqual({ known: true, allowCaller: false });
    // the deprecated switch opens nothing
    expect(landTestGate({ gates: { allow_test_cmd: true } }, '/src/app').allowCaller).toBe(false);
    expect(landTestGate({ gates: { allow_caller_test_cmd: true } }, '/src/app').allowCaller).toBe(true);
    const value = { test_commands: { '/src/other': 'make', '/src/*': ['npm', 'test'], '*': 'true' } };
    expect(landTestGate(value, '/src/app').configured).toEqual(['npm', 'test']);
    expect(landTestGate(value, '/elsewhere').configured).toBe('true');
    expect(landTestGate({ test_commands: { '/src/other': 'make' } }, '/src/app').configured).toBeUndefined();
  });

  it('matches like the worker: * any run, ? one character, the rest literally', () => {
    expect(globMatch('/home/*/repo', '/home/a/b/repo')).toBe(true);
    expect(globMatch('/src/ap?', '/src/app')).toBe(true);
    expect(globMatch('/src/a.p', '/src/app')).toBe(false);
    expect(globMatch('/src', '/src/app')).toBe(false);
  });

  it('shows an argument vector as one line, quoting what needs it', () => {
    expect(formatTestCommand('npm test && npm run lint')).toBe('npm test && npm run lint');
    expect(formatTestCommand(['make', 'check', 'NAME=a b', "it's"])).toBe(`make check 'NAME=a b' 'it'\\''s'`);
  });

  it("tells the refusal of a caller's test_cmd from other W500s, and drops the code the message repeats", () => {
    const refusal = {
      code: 'W500',
      message:
        "W500: test_cmd in a worktree::land call is refused: only the repository's configured test command (test_commands) runs; an operator allows per-call commands with gates.allow_caller_test_cmd: true in the worktree configuration entry",
    };
    expect(isCallerTestCmdRefusal(refusal)).toBe(true);
    expect(isCallerTestCmdRefusal({ code: 'W500', message: 'W500: worktree::land is disabled (gates.allow_land is false …)' })).toBe(false);
    expect(isCallerTestCmdRefusal(undefined)).toBe(false);
    expect(withoutCode(refusal).message.startsWith('test_cmd in a worktree::land call is refused')).toBe(true);
    expect(withoutCode({ code: 'W221', message: 'W221: commits not in main' })).toEqual({ code: 'W221', message: 'commits not in main' });
    expect(withoutCode({ code: 'not_connected', message: 'engine unreachable' })).toEqual({
      code: 'not_connected',
      message: 'engine unreachable',
    });
  });
});
