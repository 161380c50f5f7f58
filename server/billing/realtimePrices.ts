// What a realtime response costs: text and audio tokens priced apart, in the
// gateway's units (quota = weighted tokens x model ratio x group ratio, as
// computeQuota). Audio ratios are shares of the model's text input price,
// read from the price catalog (@pydantic/genai-prices lists input, output and
// cached audio for the gpt-4o-realtime and gpt-realtime families). A model the
// catalog prices no audio for bills an audio token as a text token (input at
// 1, output at the completion ratio), and says so in its log formula.
import type { RealtimeUsage } from '../protocols/upstream/realtime';
import { catalogPrice } from './catalog';
import { cachedPromptRatioFor } from './prices';

/** The ratios one response is priced at. */
export interface RealtimeRatios {
  /** model ratio x group ratio */
  ratio: number;
  modelRatio: number;
  groupRatio: number;
  /** Text output / text input. */
  completionRatio: number;
  /** Cached text input / text input. */
  cachedRatio: number;
  audioInputRatio: number;
  audioOutputRatio: number;
  cachedAudioRatio: number;
  /** False when the catalog has no audio price for the model (audio then costs what text costs). */
  audioPriced: boolean;
}

export function realtimeRatios(
  admission: { model: string; ratio: number; modelRatio: number; groupRatio: number; cachedPromptRatio?: number },
  completionRatio: number,
): RealtimeRatios {
  const override = admission.cachedPromptRatio === undefined ? undefined : { [admission.model]: admission.cachedPromptRatio };
  const cachedRatio = cachedPromptRatioFor(admission.model, override);
  const catalog = catalogPrice(admission.model);
  const audioPriced = catalog?.audioInputRatio !== undefined && catalog.audioOutputRatio !== undefined;
  const audioInputRatio = audioPriced ? catalog.audioInputRatio! : 1;
  return {
    ratio: admission.ratio,
    modelRatio: admission.modelRatio,
    groupRatio: admission.groupRatio,
    completionRatio,
    cachedRatio,
    audioInputRatio,
    audioOutputRatio: audioPriced ? catalog.audioOutputRatio! : completionRatio,
    cachedAudioRatio: audioPriced ? (catalog.audioCacheReadRatio ?? cachedRatio * audioInputRatio) : cachedRatio,
    audioPriced,
  };
}

/** A number in a formula: no float noise. */
const shown = (value: number) => String(Number(value.toFixed(6)));

/**
 * quota = floor((text in + cached text x cachedRatio + audio in x audioInputRatio + cached audio x cachedAudioRatio
 *   + floor(text out x completionRatio) + floor(audio out x audioOutputRatio)) x ratio),
 * at least 1 for a response that used tokens at a price above 0, and 0 for one that used none.
 * Text in and audio in are the uncached ones.
 */
export function realtimeCharge(ratios: RealtimeRatios, usage: RealtimeUsage): { charge: number; formula: string } {
  const textIn = usage.textInputTokens - usage.cachedTextInputTokens;
  const audioIn = usage.audioInputTokens - usage.cachedAudioInputTokens;
  const textOut = Math.floor(usage.textOutputTokens * ratios.completionRatio);
  const audioOut = Math.floor(usage.audioOutputTokens * ratios.audioOutputRatio);
  const weighted =
    textIn +
    usage.cachedTextInputTokens * ratios.cachedRatio +
    audioIn * ratios.audioInputRatio +
    usage.cachedAudioInputTokens * ratios.cachedAudioRatio +
    textOut +
    audioOut;
  const used = usage.inputTokens + usage.outputTokens > 0;
  let charge = used ? Math.floor(weighted * ratios.ratio) : 0;
  if (used && ratios.ratio > 0 && charge <= 0) charge = 1;
  const terms = [
    `text in ${textIn}`,
    `cached text ${usage.cachedTextInputTokens} × ${shown(ratios.cachedRatio)}`,
    `audio in ${audioIn} × ${shown(ratios.audioInputRatio)}`,
    `cached audio ${usage.cachedAudioInputTokens} × ${shown(ratios.cachedAudioRatio)}`,
    `⌊text out ${usage.textOutputTokens} × ${shown(ratios.completionRatio)}⌋`,
    `⌊audio out ${usage.audioOutputTokens} × ${shown(ratios.audioOutputRatio)}⌋`,
  ];
  const note = ratios.audioPriced ? '' : ' (no audio price in the catalog: audio at text prices)';
  return { charge, formula: `(${terms.join(' + ')}) × ${shown(ratios.modelRatio)} × ${shown(ratios.groupRatio)} = ${charge}${note}` };
}

/**
 * The most a response can cost, held before it runs: its input bound at the
 * dearer of the text and audio input prices, its output limit at the dearer
 * of the output prices. Rounded up.
 */
export function realtimeBound(ratios: RealtimeRatios, inputTokens: number, outputTokens: number): number {
  const weighted =
    inputTokens * Math.max(1, ratios.audioInputRatio) + outputTokens * Math.max(ratios.completionRatio, ratios.audioOutputRatio);
  return Math.ceil(weighted * ratios.ratio);
}
