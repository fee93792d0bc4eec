import { createHmac, createSecretKey, timingSafeEqual, type KeyObject } from 'node:crypto';
import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import { parse as parseQuery } from 'node:querystring';
import { HTTPModuleFunctions, type Logger } from '@slack/bolt';

/** How far in the past a request's timestamp may be (Slack's rule, as Bolt applies it): an older one is a replay. */
export const SLACK_MAX_REQUEST_AGE_S = 5 * 60;

/** The signing secret, made a key once rather than for every request. */
export function signingKey(signingSecret: string): KeyObject {
  // Fails closed: no secret, no request is ever accepted (the config asks for one in HTTP mode).
  if (!signingSecret) throw new Error('a Slack signing secret is required to verify requests');
  return createSecretKey(Buffer.from(signingSecret, 'utf8'));
}

/**
 * Why a request is not Slack's, or undefined when its signature holds: Bolt's rules
 * (verifySlackRequest), each kept — both headers present once, a numeric timestamp at most five
 * minutes old, version `v0`, and the HMAC-SHA256 of `v0:<timestamp>:<body>` under the signing
 * secret. Only the comparison differs: `timingSafeEqual` on the two hex digests, where Bolt's
 * tsscmp draws a random key and computes two more HMACs for every request to compare in
 * constant time.
 */
export function signatureProblem(key: KeyObject, headers: IncomingMessage['headers'], body: string, nowMs: number): string | undefined {
  const signature = headers['x-slack-signature'];
  if (typeof signature !== 'string') return 'header x-slack-signature missing or repeated';
  const timestampHeader = headers['x-slack-request-timestamp'];
  if (typeof timestampHeader !== 'string') return 'header x-slack-request-timestamp missing or repeated';
  const timestamp = Number(timestampHeader);
  if (Number.isNaN(timestamp)) return `header x-slack-request-timestamp is not a number (${timestampHeader})`;
  if (timestamp < Math.floor(nowMs / 1000) - SLACK_MAX_REQUEST_AGE_S) return 'x-slack-request-timestamp is more than 5 minutes old: request is stale';
  const [version, hash] = signature.split('=');
  if (version !== 'v0') return 'unknown signature version';
  // Signed as Bolt signs it: the number the timestamp reads as, the body as text.
  const expected = Buffer.from(createHmac('sha256', key).update(`v0:${timestamp}:${body}`).digest('hex'), 'latin1');
  const given = Buffer.from(hash ?? '', 'utf8');
  // A digest of the wrong length cannot match; its length tells nothing of the secret.
  if (given.length !== expected.length || !timingSafeEqual(given, expected)) return 'signature mismatch';
  return undefined;
}

/**
 * Bolt's HTTP receiver's request listener with the signature check in front of it, for a
 * receiver built with `signatureVerification: false`: every POST is read (by Bolt's own
 * buffering, which the receiver then reuses) and answered 401 unless its signature holds, before
 * the receiver parses it — as the receiver's own check would. Slack's unsigned `ssl_check` form
 * passes with nothing else of its body kept, as in Bolt, so no payload rides along unsigned.
 * Other methods go to the receiver untouched: it routes only POSTs to its events endpoint.
 */
export function signedOnly(receive: RequestListener, signingSecret: string, logger: Pick<Logger, 'warn'>, now: () => number = Date.now): RequestListener {
  const key = signingKey(signingSecret);
  const pass = (req: IncomingMessage, res: ServerResponse) => {
    try {
      receive(req, res);
    } catch (error) {
      // What the receiver's own server does with a request it does not route (a 404).
      HTTPModuleFunctions.defaultDispatchErrorHandler({ error: error as Error, logger: logger as Logger, request: req, response: res });
    }
  };
  return (req, res) => {
    if (req.method?.toUpperCase() !== 'POST') return pass(req, res);
    HTTPModuleFunctions.bufferIncomingMessage(req).then(
      (buffered) => {
        const body = buffered.rawBody.toString();
        if (req.headers['content-type'] === 'application/x-www-form-urlencoded' && parseQuery(body).ssl_check === '1') {
          buffered.rawBody = Buffer.from('ssl_check=1');
          return pass(buffered, res);
        }
        const problem = signatureProblem(key, req.headers, body, now());
        if (problem === undefined) return pass(buffered, res);
        logger.warn(`Failed to parse and verify the request data: Failed to verify authenticity: ${problem}`);
        HTTPModuleFunctions.buildNoBodyResponse(res, 401);
      },
      (err: unknown) => {
        logger.warn(`Failed to parse and verify the request data: ${(err as Error).message}`);
        HTTPModuleFunctions.buildNoBodyResponse(res, 401);
      },
    );
  };
}
