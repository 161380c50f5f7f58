// The endpoints the price list names for a model: what its name says it is,
// narrowed to what the adaptors of the channel types serving it offer.
import { describe, expect, it } from 'vitest';
import { modelEndpoints, modelKind } from '../../server/protocols/modelEndpoints';

const OPENAI = 1;
const ANTHROPIC = 14;
const JINA = 52;

describe('modelKind', () => {
  it('reads the kind from the name, the vendor prefix left out, chat when nothing else matches', () => {
    expect(
      [
        'gpt-4o',
        'text-embedding-3-small',
        'BAAI/bge-m3',
        'jina-reranker-v2-base-multilingual',
        'bge-reranker-v2-m3',
        'dall-e-3',
        'gpt-image-1',
        'tts-1',
        'gpt-4o-mini-tts',
        'whisper-1',
        'gpt-4o-transcribe',
        'omni-moderation-latest',
        'gpt-4o-realtime-preview',
        'gpt-3.5-turbo-instruct',
        'text-davinci-003',
        'meta-llama/llama-4-scout-17b-16e-instruct',
      ].map(modelKind),
    ).toEqual([
      'chat',
      'embeddings',
      'embeddings',
      'rerank',
      'rerank',
      'images',
      'images',
      'speech',
      'speech',
      'transcription',
      'transcription',
      'moderations',
      'realtime',
      'completions',
      'completions',
      'chat',
    ]);
  });
});

describe('modelEndpoints', () => {
  it('names chat and the three translated APIs for a chat model, the one API for the other kinds', () => {
    expect(modelEndpoints('gpt-4o', [OPENAI])).toEqual(['chat', 'responses', 'messages', 'gemini']);
    expect(modelEndpoints('claude-sonnet-4-5', [ANTHROPIC])).toEqual(['chat', 'responses', 'messages', 'gemini']);
    expect(modelEndpoints('text-embedding-3-small', [OPENAI])).toEqual(['embeddings']);
    expect(modelEndpoints('whisper-1', [OPENAI])).toEqual(['audio']);
    expect(modelEndpoints('gpt-4o-realtime-preview', [OPENAI])).toEqual(['realtime']);
    expect(modelEndpoints('jina-reranker-m0', [JINA])).toEqual(['rerank']);
  });

  it('names nothing when no channel type serving the model offers what it is', () => {
    // Anthropic's adaptor embeds nothing and opens no realtime session; Jina has no chat; OpenAI does not rerank
    expect(modelEndpoints('text-embedding-3-small', [ANTHROPIC])).toEqual([]);
    expect(modelEndpoints('gpt-4o-realtime-preview', [ANTHROPIC])).toEqual([]);
    expect(modelEndpoints('gpt-4o', [JINA])).toEqual([]);
    expect(modelEndpoints('jina-reranker-m0', [OPENAI])).toEqual([]);
    expect(modelEndpoints('gpt-4o', [])).toEqual([]);
    // one channel type that serves it is enough
    expect(modelEndpoints('text-embedding-3-small', [ANTHROPIC, OPENAI])).toEqual(['embeddings']);
  });
});
