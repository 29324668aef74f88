import { useSyncExternalStore } from 'react';

/** Light and dark themes: `data-theme` on <html>, stored in localStorage `eng-theme` (console spec §4 Global UX). */
export type Theme = 'light' | 'dark';
const KEY = 'eng-theme';
const listeners = new Set<() => void>();

export function currentTheme(): Theme {
  return document.documentElement.getAttribute('data-theme') === 'light' ? 'light' : 'dark';
}

export function setTheme(theme: Theme): void {
  const root = document.documentElement;
  root.classList.add('theme-transition');
  root.setAttribute('data-theme', theme);
  try {
    localStorage.setItem(KEY, theme);
  } catch {
    // private mode: the choice lasts for this page only
  }
  window.setTimeout(() => root.classList.remove('theme-transition'), 250);
  for (const listener of listeners) listener();
}

export function toggleTheme(): void {
  setTheme(currentTheme() === 'dark' ? 'light' : 'dark');
}

export function useTheme(): Theme {
  return useSyncExternalStore((listener) => {
    listeners.add(listener);
    return () => listeners.delete(listener);
  }, currentTheme);
}
