// What the tests know about the fixtures' rows: the users' old passwords and the rows' clock.

/** The passwords the fixture users had in the old gateway (their hashes are in the fixtures). */
export const FIXTURE_PASSWORDS = { root: 'old-root-password', alice: 'alice-password-1', bob: 'bob-password-12', carol: 'carol-password-1' } as const;

/** 2025-06-01T00:00:00Z: when the fixture rows were "made". */
export const FIXTURE_TIME = 1_748_736_000;

/** Alice's "chat app" key, as her clients send it. */
export const ALICE_KEY = `sk-${'AliceChatApp'.repeat(4)}`;
