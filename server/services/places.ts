// A place in a count of relayed requests in flight that several processes
// share (sharedConcurrency.ts): what a caller asks for, the answers, and the
// interface each way of sharing the count (redisPlaces.ts, ipcPlaces.ts) has.

/** What a caller asks for: a place under both limits (Infinity for none). */
export interface PlaceAsk {
  tokenId: number;
  userId: number;
  tokenLimit: number;
  userLimit: number;
}

/** A refusal: which limit is full, and how many requests hold it everywhere. */
export interface PlaceRefusal {
  scope: 'token' | 'user';
  count: number;
}

/** A place taken in a shared count; `give()` hands it back once. */
export interface PlaceTaken {
  give(): void;
}

/** A shared count's answer; undefined when it could not answer (unreachable, too slow): the caller counts on its own then. */
export type PlaceAnswer = PlaceTaken | PlaceRefusal | undefined;

export interface SharedPlaces {
  /** How the log names it. */
  readonly name: string;
  take(ask: PlaceAsk): Promise<PlaceAnswer>;
}

export const isRefusal = (answer: PlaceTaken | PlaceRefusal): answer is PlaceRefusal => 'scope' in answer;

/** A limit as the scripts and messages carry it: -1 for none (JSON has no Infinity). */
export const wire = (limit: number) => (Number.isFinite(limit) ? limit : -1);
