// A non-Java Sluice producer and results reader, as a Node.js team would write it: kafkajs and
// @kafkajs/confluent-schema-registry with their DEFAULT options (register() checks GET /config/{subject}
// and, the first time, sets it with PUT /config/{subject}). Run by NodeRegistryClientIT.
//
// Environment: BOOTSTRAP (host:port), REGISTRY_URL, SCHEMA_FILE (Notification.avsc, fully resolved),
// COUNT (notifications to produce), RUN (a unique prefix for ids and chats), TIMEOUT_MS.
// Prints one JSON line per event on stdout: {"event":"registered"|"reference"|"produced"|"result"|"dead_letter"|"done", ...}.
// Exit 0 when every produced id has a result and the invalid record is dead-lettered; 1 otherwise.
'use strict';
const fs = require('fs');
const { Kafka, logLevel } = require('kafkajs');
const { SchemaRegistry, SchemaType } = require('@kafkajs/confluent-schema-registry');

const env = (name) => {
  const v = process.env[name];
  if (!v) { throw new Error(`missing environment variable ${name}`); }
  return v;
};
const print = (o) => process.stdout.write(JSON.stringify(o) + '\n');

async function main() {
  const count = Number(env('COUNT'));
  const run = env('RUN');
  const timeoutMs = Number(env('TIMEOUT_MS'));
  const registry = new SchemaRegistry({ host: env('REGISTRY_URL') }); // default options
  const kafka = new Kafka({ clientId: 'node-check', brokers: [env('BOOTSTRAP')], logLevel: logLevel.WARN });

  // 1. Register the Notification schema with the client's defaults, as a producer on start does.
  const schema = fs.readFileSync(env('SCHEMA_FILE'), 'utf8');
  const { id } = await registry.register({ type: SchemaType.AVRO, schema }, { subject: 'notifications-value' });
  const again = await registry.register({ type: SchemaType.AVRO, schema }, { subject: 'notifications-value' });
  print({ event: 'registered', id, again: again.id, latest: await registry.getLatestSchemaId('notifications-value') });

  // 2. Schema references: a type in one subject used by a schema in another, encoded and decoded.
  const money = { type: 'record', name: 'Money', namespace: `check${run}`, fields: [{ name: 'cents', type: 'long' }] };
  const moneyReg = await registry.register({ type: SchemaType.AVRO, schema: JSON.stringify(money) }, { subject: `check${run}.Money` });
  const order = { type: 'record', name: 'Order', namespace: `check${run}`, fields: [{ name: 'total', type: `check${run}.Money` }] };
  const orderReg = await registry.register({
    type: SchemaType.AVRO, schema: JSON.stringify(order),
    references: [{ name: `check${run}.Money`, subject: `check${run}.Money`, version: 1 }],
  }, { subject: `check${run}-orders-value` });
  const fresh = new SchemaRegistry({ host: env('REGISTRY_URL') }); // no cache: resolves references over HTTP
  const decoded = await fresh.decode(await registry.encode(orderReg.id, { total: { cents: 1250 } }));
  print({ event: 'reference', money_id: moneyReg.id, order_id: orderReg.id, decoded_cents: Number(decoded.total.cents) });

  // 3. Produce notifications keyed by chat id, plus one without a chat id (invalid: dead-lettered).
  const producer = kafka.producer();
  await producer.connect();
  const now = Date.now();
  const messages = [];
  for (let i = 0; i < count; i++) {
    const chat = String(800000 + i);
    const value = await registry.encode(id, {
      id: `node-${run}-${i}`, bot_id: 'alerts', chat_id: chat, kind: 'meeting.reminder', event_class: 'CRITICAL',
      user_id: null, entity: null, text: `from node #${i}`, parse_mode: null, created_at: now,
      expires_at: now + 10 * 60 * 1000, not_before: null, bot_pool: [], attributes: { source: 'node' },
    });
    messages.push({ key: chat, value });
  }
  const invalidId = `node-${run}-invalid`;
  messages.push({
    key: 'none',
    value: await registry.encode(id, {
      id: invalidId, bot_id: 'alerts', chat_id: null, kind: 'meeting.reminder', event_class: null, user_id: null,
      entity: null, text: 'no chat', parse_mode: null, created_at: now, expires_at: null, not_before: null,
      bot_pool: [], attributes: {},
    }),
  });
  await producer.send({ topic: 'notifications', messages });
  await producer.disconnect();
  print({ event: 'produced', count, invalid: invalidId });

  // 4. Read delivery.results (and the dead-letter topic) until every id has its result.
  const consumer = kafka.consumer({ groupId: `node-check-${run}` });
  await consumer.connect();
  await consumer.subscribe({ topics: ['delivery.results', 'notifications.dlq'], fromBeginning: true });
  // Every produced id has one result: the valid ones from the sender, the invalid one FAILED from the topology.
  const waiting = new Set([...Array.from({ length: count }, (_, i) => `node-${run}-${i}`), invalidId]);
  let deadLettered = false;
  const finished = new Promise((resolve) => {
    consumer.run({
      eachMessage: async ({ topic, message }) => {
        const value = await registry.decode(message.value);
        if (topic === 'notifications.dlq') {
          if (value.id === invalidId) {
            const reason = message.headers['sluice.dlq.reason'];
            print({ event: 'dead_letter', id: value.id, reason: reason ? reason.toString() : null });
            deadLettered = true;
          }
        } else if (String(value.message_id).startsWith(`node-${run}-`)) {
          print({ event: 'result', id: value.message_id, status: value.status, chat: value.chat_id, attempts: value.attempts });
          waiting.delete(value.message_id);
        }
        if (waiting.size === 0 && deadLettered) { resolve(true); }
      },
    });
  });
  const timedOut = new Promise((resolve) => setTimeout(() => resolve(false), timeoutMs));
  const ok = await Promise.race([finished, timedOut]);
  await consumer.disconnect();
  print({ event: 'done', ok, missing: Array.from(waiting), dead_lettered: deadLettered });
  process.exit(ok ? 0 : 1);
}

main().catch((e) => {
  process.stderr.write(`node client failed: ${e && e.stack ? e.stack : e}\n`);
  process.exit(1);
});
