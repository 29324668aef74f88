import { useMemo } from 'react';
import { useModelCatalog } from '../../api/chat-models.ts';
import { FALLBACK_MODELS, groupModels, type Model, modelKey, parseModelKey } from '../../lib/chat/models.ts';
import { updateChatPrefs, useChatPrefs } from '../../lib/chat/prefs.ts';

const selectModel = (m: Model) => updateChatPrefs(() => ({ model: modelKey(m) }));
const setEffort = (effort: string) => updateChatPrefs(() => ({ effort }));

/** The picker's groups and the selected model: the last one picked (local storage) while the catalogue has it, else the first listed. */
export function useChatModel() {
  const prefs = useChatPrefs();
  const { models, providers } = useModelCatalog();
  // the latest read failed (router gone or unreachable): the static fallback list, not stale data
  const offline = models.isError;
  const groups = useMemo(() => groupModels(offline ? undefined : models.data, providers.data), [offline, models.data, providers.data]);
  const available = useMemo(() => groups.flatMap((g) => g.models), [groups]);
  const selected: Model | undefined = useMemo(() => {
    const wanted = prefs.model ? parseModelKey(prefs.model) : undefined;
    const found = wanted && available.find((m) => m.provider === wanted.provider && m.id === wanted.id);
    if (found) return found;
    if (offline && wanted) return FALLBACK_MODELS.find((m) => m.provider === wanted.provider && m.id === wanted.id) ?? available[0];
    return available[0];
  }, [prefs.model, available, offline]);
  return {
    groups,
    offline,
    loading: models.isPending,
    selected,
    effort: prefs.effort,
    select: selectModel,
    setEffort,
    hasModels: available.length > 0,
  };
}
