import { describe, expect, it } from 'vitest';
import type { AppError } from '../../lib/errors.ts';
import { ALL_SCOPES } from '../../lib/scopes.ts';
import {
  createShipment,
  randomParcelNumber,
  type Shipment,
  type ShipmentRepository,
  trackShipment,
} from '../../lib/shipments/shipments.ts';
import type { Caller } from '../../lib/tokens/claims.ts';

const NOW = new Date('2026-11-24T10:00:00Z');
/** A user's caller, allowed every route. */
const userCaller = (username: string, customerId: string | null): Caller => ({
  subject: { kind: 'user', username },
  customerId,
  scopes: ALL_SCOPES,
});
const alice = userCaller('alice', 'C-1');

/** Shipments in memory, with the DynamoDB repository's rule: a taken parcel number is refused. */
function memoryShipments(): ShipmentRepository & { readonly all: Map<string, Shipment> } {
  const all = new Map<string, Shipment>();
  return {
    all,
    async insert(shipment) {
      if (all.has(shipment.parcelNumber)) return false;
      all.set(shipment.parcelNumber, shipment);
      return true;
    },
    async get(parcelNumber) {
      return all.get(parcelNumber) ?? null;
    },
  };
}

describe('shipments', () => {
  it('draws a new parcel number when the first one is taken, and keeps the shipment that had it', async () => {
    const shipments = memoryShipments();
    const numbers = ['11111111111111', '11111111111111', '22222222222222'];
    const deps = { shipments, clock: () => NOW, newParcelNumber: () => numbers.shift() ?? '' };
    const first = await createShipment(deps, alice, { n: 1 });

    const second = await createShipment(deps, alice, { n: 2 });

    expect(second.parcelNumber).toBe('22222222222222');
    expect(shipments.all.get(first.parcelNumber)?.shipment).toEqual({ n: 1 });
  });

  it('answers 503 after three taken parcel numbers, storing nothing', async () => {
    const shipments = memoryShipments();
    await shipments.insert({
      ...(await createShipment({ shipments }, alice, {})),
      parcelNumber: '3'.repeat(14),
    });
    const before = shipments.all.size;

    const failed = createShipment({ shipments, newParcelNumber: () => '3'.repeat(14) }, alice, {});

    await expect(failed).rejects.toMatchObject({ code: 'DEPENDENCY_UNAVAILABLE' });
    expect(shipments.all.size).toBe(before);
  });

  it('draws 14 digits that do not start with 0', () => {
    for (let i = 0; i < 1000; i += 1) expect(randomParcelNumber()).toMatch(/^[1-9]\d{13}$/);
  });

  it('refuses a caller without customer, and hides another customer’s shipment as not found', async () => {
    const shipments = memoryShipments();
    const created = await createShipment({ shipments }, alice, {});
    const code = (promise: Promise<unknown>) =>
      promise.then(
        () => 'none',
        (error: AppError) => error.code,
      );

    expect(await code(createShipment({ shipments }, userCaller('solo', null), {}))).toBe('CONTEXT_MISSING');
    expect(await code(trackShipment({ shipments }, userCaller('bob', 'C-2'), created.parcelNumber))).toBe(
      'NOT_FOUND',
    );
    expect(await trackShipment({ shipments }, userCaller('carol', 'C-1'), created.parcelNumber)).toEqual(
      created,
    );
  });
});
