/**
 * The shipment repository (lib/shipments/dynamodb.ts) on each DynamoDB implementation: a
 * shipment reads back as it was stored, and a parcel number is never given out twice.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { createDynamoShipmentRepository } from '../../lib/shipments/dynamodb.ts';
import type { Shipment, ShipmentRepository } from '../../lib/shipments/shipments.ts';
import { describeEachDynamo, startTestDynamo, type TestDynamo } from '../support/dynamo.ts';

const shipment = (parcelNumber: string, customerId = 'C-1001'): Shipment => ({
  parcelNumber,
  customerId,
  createdBy: 'alice',
  createdAt: '2026-11-23T10:00:00.000Z',
  status: 'registered',
  shipment: { recipient: { name: 'Jan Novák', city: 'Brno' }, parcels: [{ weightKg: 1.25 }], cod: 1e21 },
});

describeEachDynamo('shipment repository', (kind) => {
  let dynamo: TestDynamo;
  let shipments: ShipmentRepository;
  beforeAll(async () => {
    dynamo = await startTestDynamo(kind);
    shipments = createDynamoShipmentRepository({
      client: dynamo.documentClient,
      tableName: dynamo.tables.shipments,
    });
  });
  afterAll(() => dynamo?.close());

  it('reads a stored shipment back as it was stored', async () => {
    const stored = shipment('10000000000001');

    const inserted = await shipments.insert(stored);

    expect(inserted).toBe(true);
    expect(await shipments.get('10000000000001')).toEqual(stored);
  });

  it('refuses a parcel number that is taken, and keeps the shipment that holds it', async () => {
    const first = shipment('10000000000002', 'C-1001');
    await shipments.insert(first);

    const inserted = await shipments.insert(shipment('10000000000002', 'C-2002'));

    expect(inserted).toBe(false);
    expect(await shipments.get('10000000000002')).toEqual(first);
  });

  it('takes the same shipment sent again (its first answer lost) as stored', async () => {
    const first = shipment('40000000000001');
    await shipments.insert(first);

    expect(await shipments.insert(first)).toBe(true);
    expect(await shipments.insert({ ...first, createdBy: 'someone-else' })).toBe(false);
  });

  it('finds no shipment under a parcel number never given out', async () => {
    const found = await shipments.get('19999999999999');

    expect(found).toBeNull();
  });
});
