import type { LookupAddress } from 'node:dns';
import http from 'node:http';
import https from 'node:https';
import { AddressRefusedError, guardedLookup } from '../lib/address-policy.js';
import { lookupWithLocalhost } from '../lib/http.js';
import { isAllowedPeerAddress } from '../lib/public-dispatcher.js';
import { escapedLine } from '../lib/text.js';
import { WebhookSender, WebhookUrlError, webhookRules } from '../lib/webhook.js';
import {
  ACCEPTED,
  checkImages,
  ContentRefused,
  IMAGE_LIMITS,
  IMAGE_TYPES,
  quoted,
  sniffImage,
  type ContentRules,
  type TurnContent,
} from './attachments.js';

/**
 * Images a caller sends by URL, fetched by the bridge when the operator allows it (`fetchImageUrls`, off by
 * default): by the rules push notifications and SAMVAD callbacks follow (lib/webhook.ts: public https
 * addresses only, every resolved address checked and connected to exactly, against SSRF and DNS rebinding;
 * loopback over http too under --dev-http-peers), GET only, no redirects followed, each bounded in time and
 * in size (OpenClaw's own 10 s and 10 MB for the images it fetches), all of a message's files together within
 * the agent's body limit. OpenClaw's own URL fetching stays off: the gateway gets the bytes.
 */

/** The settings the rules follow (read at each call: the operator may change them while running). */
export interface FileSettings {
  fetchImageUrls: boolean;
  devHttpPeers: boolean;
  bodyLimitBytes: number;
}

/** What the doors need of the attachments: the rules to parse a message by, and how to fetch its images. */
export interface AttachmentRules extends ContentRules {
  /** A message's attachments, inline and fetched, are at most this many bytes together. */
  bodyLimitBytes: number;
  /** One image's bytes, at most `maxBytes` (past it: ImageTooLarge), or a ContentRefused saying why not. */
  fetch(url: string, maxBytes: number): Promise<Buffer>;
}

/** Test seams: how long one fetch may take (default 10 s), and name resolution (no DNS reaches the tests). */
export interface ImageFetchOptions {
  timeoutMs?: number;
  resolveHost?: (hostname: string, family: number | undefined) => Promise<LookupAddress[]>;
}

/** How long one image may take to arrive, headers and bytes (OpenClaw's `images.timeoutMs`). */
export const IMAGE_FETCH_MS = 10_000;

/** The rules as the settings are now. */
export function attachmentRules(settings: FileSettings, options: ImageFetchOptions = {}): AttachmentRules {
  const { devHttpPeers } = settings;
  return {
    fetchImageUrls: settings.fetchImageUrls,
    bodyLimitBytes: settings.bodyLimitBytes,
    urlProblem: (url) => urlProblem(url, devHttpPeers),
    fetch: (url, maxBytes) => fetchImage(url, maxBytes, devHttpPeers, options),
  };
}

/**
 * Fetches the message's images sent by URL, in order, and holds them to the limits every image is held to
 * (attachments.ts): called once the caller's limits let the call through, so a stranger's URLs cost it its
 * own calls. Each image's note (Traffic) gets its type and size as fetched. Refused where the rules (none:
 * inline only) do not allow fetching.
 */
export async function fetchImages(content: TurnContent, rules: AttachmentRules | undefined): Promise<void> {
  if (!content.images.some((image) => image.url !== undefined)) return;
  if (!rules?.fetchImageUrls) {
    throw new ContentRefused('type', `This agent does not take images by URL. It takes ${ACCEPTED}.`);
  }
  let room = rules.bodyLimitBytes - content.inlineBytes;
  for (const image of content.images) {
    if (image.url === undefined) continue;
    const max = Math.max(0, Math.min(IMAGE_LIMITS.bytes, room));
    let bytes: Buffer;
    try {
      bytes = await rules.fetch(image.url, max);
    } catch (error) {
      if (!(error instanceof ImageTooLarge)) throw error;
      const name = image.note.name ? quoted(image.note) : 'sent by URL';
      throw new ContentRefused(
        'limit',
        max < IMAGE_LIMITS.bytes
          ? `Image ${name} is larger than the ${max} bytes left of this agent's limit of ${rules.bodyLimitBytes} bytes for a message's files, inline and fetched together.`
          : `Image ${name} is larger than ${IMAGE_LIMITS.bytes} bytes (10 MB), the most the gateway takes an image (OpenClaw's limit).`,
      );
    }
    const type = sniffImage(bytes);
    if (!type) {
      throw new ContentRefused(
        'form',
        `The file at ${shown(image.url)} is not a PNG, JPEG, GIF or WebP image (its bytes are none of these).`,
      );
    }
    image.note.type = type;
    image.note.bytes = bytes.length;
    image.base64 = bytes.toString('base64');
    delete image.url;
    room -= bytes.length;
  }
  checkImages(content);
}

/** A fetch that passed its byte bound (fetchImages says which limit that was). */
export class ImageTooLarge extends Error {}

const checkers = new Map<boolean, WebhookSender>();

/** The push notification rules' checks that need no DNS (scheme, credentials, IP literals, localhost). */
function checked(url: string, devHttpPeers: boolean): URL {
  let checker = checkers.get(devHttpPeers);
  if (!checker) {
    checker = new WebhookSender({ name: 'the image URL', ...webhookRules(devHttpPeers) });
    checkers.set(devHttpPeers, checker);
  }
  return checker.check(url);
}

function urlProblem(url: string, devHttpPeers: boolean): string | undefined {
  try {
    checked(url, devHttpPeers);
    return undefined;
  } catch (error) {
    if (error instanceof WebhookUrlError) return error.message;
    throw error;
  }
}

const resolveWithLocalhost = (hostname: string, family: number | undefined) =>
  new Promise<LookupAddress[]>((resolve, reject) =>
    lookupWithLocalhost(hostname, { all: true, family: family ?? 0 }, (error, found) =>
      error ? reject(error) : resolve(found as unknown as LookupAddress[]),
    ),
  );

function fetchImage(
  raw: string,
  maxBytes: number,
  devHttpPeers: boolean,
  options: ImageFetchOptions,
): Promise<Buffer> {
  const timeoutMs = options.timeoutMs ?? IMAGE_FETCH_MS;
  return new Promise<Buffer>((resolve, reject) => {
    let url: URL;
    try {
      url = checked(raw, devHttpPeers);
    } catch (error) {
      return reject(
        error instanceof WebhookUrlError
          ? new ContentRefused('form', `Image URL refused: ${error.message}`)
          : error,
      );
    }
    let settled = false;
    const fail = (error: Error) => {
      if (settled) return;
      settled = true;
      request.destroy();
      reject(error);
    };
    const lookup = guardedLookup(
      (address) => isAllowedPeerAddress(address, devHttpPeers),
      options.resolveHost ?? resolveWithLocalhost,
      (hostname, address) =>
        `the image URL's host ${hostname} resolves to ${address}, which is not a public address.`,
    );
    const client = url.protocol === 'https:' ? https : http;
    const request = client.get(
      url,
      { agent: false, lookup, headers: { accept: IMAGE_TYPES.join(', '), 'user-agent': 'Agent-Bridge' } },
      (response) => {
        const status = response.statusCode ?? 0;
        if (status !== 200) {
          const redirect =
            status >= 300 && status < 400 ? ' (redirects are not followed: send the final URL)' : '';
          return fail(
            new ContentRefused(
              'form',
              `The image at ${shown(raw)} could not be fetched: HTTP ${status}${redirect}.`,
            ),
          );
        }
        if (Number(response.headers['content-length']) > maxBytes) return fail(new ImageTooLarge());
        const chunks: Buffer[] = [];
        let size = 0;
        response.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > maxBytes) fail(new ImageTooLarge());
          else chunks.push(chunk);
        });
        response.on('end', () => {
          if (settled) return;
          settled = true;
          clearTimeout(timer);
          resolve(Buffer.concat(chunks));
        });
        response.on('error', (error) => fail(unreachable(raw, error)));
      },
    );
    const timer = setTimeout(
      () =>
        fail(
          new ContentRefused(
            'form',
            `The image at ${shown(raw)} did not arrive within ${timeoutMs / 1000} s.`,
          ),
        ),
      timeoutMs,
    );
    request.on('error', (error) => fail(unreachable(raw, error)));
    request.on('close', () => clearTimeout(timer));
  });
}

function unreachable(raw: string, error: Error): ContentRefused {
  if (error instanceof AddressRefusedError)
    return new ContentRefused('form', `Image URL refused: ${error.message}`);
  return new ContentRefused(
    'form',
    `The image at ${shown(raw)} could not be fetched: ${escapedLine(error.message, 200)}.`,
  );
}

/** A URL as a refusal quotes it: one escaped line, cut short. */
function shown(url: string): string {
  return escapedLine(url, 200);
}
