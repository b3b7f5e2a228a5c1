import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { PODS, CLONESETS } from '../../../../src/contracts/index.js';
import type { KubeClient } from '../../../../src/runtime/core/client.js';
import { EventRecorder, eventNameSuffix } from '../../../../src/runtime/core/events.js';
import type { KubeObject } from '../../../../src/runtime/core/types.js';

// A fake client that only counts the Events written (the recorder's only call).
function recorder(now: () => number) {
  const written: KubeObject[] = [];
  const client = { create: async (_t: unknown, ev: KubeObject) => (written.push(ev), ev) } as unknown as KubeClient;
  const rec = new EventRecorder(client, 'test', pino({ level: 'silent' }), { maxInFlight: 100, now });
  return { rec, written };
}

const obj = (name: string): KubeObject => ({ metadata: { name, namespace: 'ns', uid: `uid-${name}` } });

describe("event spam filter (client-go's: 25 per object, one more every 5 minutes)", () => {
  it('keeps 25 events about one object, drops the rest, refills over time; other objects have their own bucket', async () => {
    let t = 0;
    const { rec, written } = recorder(() => t);
    for (let i = 0; i < 1000; i++) rec.emit(CLONESETS, obj('web'), 'Normal', 'SuccessfulCreate', `pod ${i}`);
    rec.emit(PODS, obj('web-abcde'), 'Normal', 'Pulled', 'x');
    await new Promise((r) => setTimeout(r, 10));
    expect(written.filter((e) => e.reason === 'SuccessfulCreate')).toHaveLength(25);
    expect(written.filter((e) => e.reason === 'Pulled')).toHaveLength(1);
    expect(rec.filtered).toBe(975);
    t += 300_000;
    rec.emit(CLONESETS, obj('web'), 'Normal', 'SuccessfulCreate', 'after 5 minutes');
    rec.emit(CLONESETS, obj('web'), 'Normal', 'SuccessfulCreate', 'still limited');
    await new Promise((r) => setTimeout(r, 10));
    expect(written.map((e) => e.message)).toContain('after 5 minutes');
    expect(written.map((e) => e.message)).not.toContain('still limited');
  });
});

describe('event names', () => {
  it("are client-go's <object>.<hex nanoseconds>, unique even for many events in one millisecond", async () => {
    const { rec, written } = recorder(() => 0);
    for (let i = 0; i < 20; i++) rec.emit(PODS, obj(`job-${i % 2}`), 'Normal', 'SidecarTerminator', `event ${i}`);
    await new Promise((r) => setTimeout(r, 10));
    const names = written.map((e) => e.metadata.name!);
    expect(new Set(names).size).toBe(20);
    for (const n of names) expect(n).toMatch(/^job-[01]\.[0-9a-f]{16,}$/);
    const a = eventNameSuffix(1_700_000_000_000);
    const b = eventNameSuffix(1_700_000_000_000);
    expect(BigInt(`0x${b}`)).toBeGreaterThan(BigInt(`0x${a}`));
  });
});
