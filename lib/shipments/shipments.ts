// A shipment belongs to its creator's customer; to anybody else it does not exist (404, not 403, so
// parcel numbers cannot be probed across customers).

import { randomInt } from 'node:crypto';
import * as v from 'valibot';
import { AppError } from '../errors.ts';
import { type Clock, systemClock } from '../time.ts';
import type { Caller } from '../tokens/claims.ts';

export const ShipmentRequestSchema = v.custom<Record<string, unknown>>(
  (input) => typeof input === 'object' && input !== null && !Array.isArray(input),
  'must be a JSON object',
);

const PARCEL_NUMBER = /^\d{14}$/;
export const TrackingParamsSchema = v.object({
  parcelNumber: v.pipe(v.string('is required'), v.regex(PARCEL_NUMBER, 'must be 14 digits')),
});

export interface Shipment {
  readonly parcelNumber: string;
  readonly customerId: string;
  /** A username, or a client id when `createdByKind` is 'client'. */
  readonly createdBy: string;
  /** Absent in shipments created before API clients existed: a user's. */
  readonly createdByKind?: 'client';
  readonly createdAt: string;
  readonly status: 'registered';
  readonly shipment: Record<string, unknown>;
}

export interface ShipmentRepository {
  /** False if another shipment has its number (the same one sent twice is stored). */
  insert(shipment: Shipment): Promise<boolean>;
  get(parcelNumber: string): Promise<Shipment | null>;
}

export interface ShipmentDeps {
  readonly shipments: ShipmentRepository;
  readonly clock?: Clock;
  readonly newParcelNumber?: () => string;
}

/** 14 random digits from the CSPRNG: unguessable across customers. */
export const randomParcelNumber = () =>
  `${randomInt(1, 10)}${String(randomInt(0, 1_000_000)).padStart(6, '0')}${String(randomInt(0, 10_000_000)).padStart(7, '0')}`;

const requireCustomer = (caller: Caller) => {
  if (caller.customerId === null) throw new AppError('CONTEXT_MISSING');
  return caller.customerId;
};

export async function createShipment(
  deps: ShipmentDeps,
  caller: Caller,
  body: Record<string, unknown>,
): Promise<Shipment> {
  const customerId = requireCustomer(caller);
  const { clock = systemClock, newParcelNumber = randomParcelNumber } = deps;
  for (let attempt = 0; attempt < 3; attempt++) {
    const shipment: Shipment = {
      parcelNumber: newParcelNumber(),
      customerId,
      ...(caller.subject.kind === 'user'
        ? { createdBy: caller.subject.username }
        : { createdBy: caller.subject.clientId, createdByKind: 'client' as const }),
      createdAt: clock().toISOString(),
      status: 'registered',
      shipment: body,
    };
    if (await deps.shipments.insert(shipment)) return shipment;
  }
  throw new AppError('DEPENDENCY_UNAVAILABLE', {
    cause: new Error('no free parcel number after 3 attempts'),
  });
}

export async function trackShipment(
  deps: ShipmentDeps,
  caller: Caller,
  parcelNumber: string,
): Promise<Shipment> {
  const shipment = await deps.shipments.get(parcelNumber);
  if (shipment === null || caller.customerId === null || shipment.customerId !== caller.customerId) {
    throw new AppError('NOT_FOUND', { detail: 'No shipment with this parcel number.' });
  }
  return shipment;
}
