import { useMutation } from '@tanstack/react-query';
import { callEngine } from './client.ts';

/** "Emit" (seed 4.1 op 4): a real `publish {topic, data}` on the engine's pub/sub (the reference 404s, console spec §7.1). */
export function usePublishEvent() {
  return useMutation({
    mutationFn: async ({ topic, data }: { topic: string; data: unknown }) => {
      await callEngine('publish', { topic, data });
      return { topic, at: Date.now() };
    },
  });
}
