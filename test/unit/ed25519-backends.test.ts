// The hot path signs and verifies with libsodium (sodium-native) where it loads, node:crypto elsewhere
// (src/protocol/ed25519.ts). Both must be interchangeable: the same signature for the same key and bytes,
// each verifying the other's, both refusing a changed byte, and libsodium refusing what node:crypto refuses.
import { describe, expect, it } from 'vitest';
import {
  ed25519,
  generateRawKeyPair,
  nodeEd25519,
  privateKeyFromRaw,
  publicKeyFromRaw,
  signBytes,
  sodiumEd25519,
  verifyBytes,
} from '../../src/protocol/index.js';

const sodium = sodiumEd25519();

function keys() {
  const pair = generateRawKeyPair();
  const publicKey = publicKeyFromRaw(pair.publicKey);
  if (!publicKey) throw new Error('the generated public key does not load');
  return { privateKey: privateKeyFromRaw(pair.privateKey), publicKey };
}

describe('Ed25519 backends', () => {
  it('uses libsodium here: its addon ships prebuilt for this platform', () => {
    expect(sodium?.name).toBe('libsodium');
    expect(ed25519.name).toBe('libsodium');
  });

  it('sign the same bytes alike and verify each other (deterministic Ed25519)', () => {
    if (!sodium) throw new Error('libsodium did not load');
    for (const size of [0, 1, 64, 300, 10_000]) {
      const { privateKey, publicKey } = keys();
      const data = Buffer.alloc(size, size % 251);
      const bySodium = sodium.sign(privateKey, data);
      const byNode = nodeEd25519.sign(privateKey, data);
      expect(bySodium.equals(byNode)).toBe(true);
      expect(sodium.verify(publicKey, data, byNode)).toBe(true);
      expect(nodeEd25519.verify(publicKey, data, bySodium)).toBe(true);
    }
  });

  it('both refuse a changed message byte, a changed signature byte and another key', () => {
    if (!sodium) throw new Error('libsodium did not load');
    const { privateKey, publicKey } = keys();
    const other = keys().publicKey;
    const data = Buffer.from('"@status": 200\n');
    const signature = sodium.sign(privateKey, data);
    const changedData = Buffer.from(data);
    changedData[3] = changedData[3]! ^ 1;
    const changedSignature = Buffer.from(signature);
    changedSignature[40] = changedSignature[40]! ^ 1;
    for (const backend of [sodium, nodeEd25519]) {
      expect(backend.verify(publicKey, changedData, signature)).toBe(false);
      expect(backend.verify(publicKey, data, changedSignature)).toBe(false);
      expect(backend.verify(other, data, signature)).toBe(false);
    }
  });

  it('refuses a signature whose S is not reduced (S + L): malleability, as node:crypto does', () => {
    if (!sodium) throw new Error('libsodium did not load');
    const { privateKey, publicKey } = keys();
    const data = Buffer.from('hello');
    const signature = sodium.sign(privateKey, data);
    // L, the group order, little-endian: adding it to S gives the same point and a non-canonical S.
    const order = Buffer.from('edd3f55c1a631258d69cf7a2def9de1400000000000000000000000000000010', 'hex');
    const malleable = Buffer.from(signature);
    let carry = 0;
    for (let i = 0; i < 32; i++) {
      const sum = malleable[32 + i]! + order[i]! + carry;
      malleable[32 + i] = sum & 0xff;
      carry = sum >> 8;
    }
    expect(nodeEd25519.verify(publicKey, data, malleable)).toBe(false);
    expect(sodium.verify(publicKey, data, malleable)).toBe(false);
  });

  it('signBytes and verifyBytes (base64, strings as UTF-8) go through the backend in use', () => {
    const { privateKey, publicKey } = keys();
    const signature = signBytes(privateKey, 'héllo');
    expect(nodeEd25519.verify(publicKey, Buffer.from('héllo'), Buffer.from(signature, 'base64'))).toBe(true);
    expect(verifyBytes(publicKey, 'héllo', signature)).toBe(true);
    expect(verifyBytes(publicKey, 'hello', signature)).toBe(false);
    expect(verifyBytes(publicKey, 'héllo', `${signature.slice(0, -4)}`)).toBe(false);
  });
});
