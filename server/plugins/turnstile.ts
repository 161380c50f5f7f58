// Cloudflare Turnstile: when the bot check is on, the token from the
// `turnstile` query parameter must verify before the route runs. Every
// protected request is checked (no once-per-session shortcut).
import type { FastifyReply, FastifyRequest } from 'fastify';
import { request as undiciRequest } from 'undici';
import { fail } from '../../common/envelope';

export async function requireTurnstile(request: FastifyRequest, reply: FastifyReply): Promise<void> {
  const { options, config } = request.server.ctx;
  if (!options.bool('TurnstileCheckEnabled')) return;
  const token = String((request.query as { turnstile?: string }).turnstile ?? '');
  if (!token) return reply.send(fail('the bot check is missing, please wait for it and retry'));
  try {
    const response = await undiciRequest(config.turnstileVerifyUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ secret: options.get('TurnstileSecretKey'), response: token, remoteip: request.ip }).toString(),
      headersTimeout: 10_000,
      bodyTimeout: 10_000,
    });
    const result = (await response.body.json()) as { success?: boolean };
    if (result.success !== true) return reply.send(fail('the bot check failed, please refresh the page and retry'));
  } catch {
    return reply.send(fail('the bot check could not be verified, please retry'));
  }
}
