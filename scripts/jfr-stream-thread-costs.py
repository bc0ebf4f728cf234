#!/usr/bin/env python3
"""Stream-thread CPU of a Kafka Streams app by cost, from JDK Flight Recorder execution samples (issue 21).

Usage: jfr print --stack-depth 200 --json --events jdk.ExecutionSample rec.jfr > rec.json
       scripts/jfr-stream-thread-costs.py APP_ID_PREFIX rec.json [more.json ...]
Each sample of a thread named '<APP_ID_PREFIX>...-StreamThread-<n>' (not the GlobalStreamThread) goes to the deepest frame (leaf first) that
matches a cost below; samples with none are 'other' (start-up, rebalance, restore, metrics registration).
"""
import collections
import json
import sys

COSTS = [
    ('Kafka Streams PartitionGroup.readyToProcess String.format (max.task.idle.ms=0, empty partitions)',
     ['PartitionGroup.readyToProcess']),
    ('Avro decode (Notification: validate, repartition source)', ['SpecificAvroDeserializer.deserialize']),
    ('Avro encode (outbox, repartition sink, store values)', ['SpecificAvroSerializer.serialize']),
    ('dedupe window store put + changelog', ['MeteredWindowStore.put']),
    ('dedupe window store fetch', ['MeteredWindowStore.fetch']),
    ('pressure: sender-status global store prefix scan', ['BotPressure.underPressure']),
    ('preferences global store', ['DigestPreferences.optedOut']),
    ('chat status / policy / digest / schedule stores', ['MeteredKeyValueStore.get', 'MeteredKeyValueStore.put',
                                                         'MeteredKeyValueStore.delete']),
    ('Outbound record building', ['Outbound.single', 'Outbound.result', 'Outbound.digest']),
    ('validation + chat id normalise + keyed check', ['NotificationValidator.', 'ChatIds.normalise', 'ChatKeyedInput.']),
    ('producer send (sinks, changelogs)', ['KafkaProducer.send', 'RecordCollectorImpl.send']),
    ('commit (flush, transaction, offsets)', ['StreamThread.maybeCommit', 'TaskManager.commit']),
    ('consumer poll / fetch', ['StreamThread.pollPhase', 'StreamThread.addRecordsToTasks']),
    ('punctuators', ['TaskExecutor.punctuate']),
    ('Kafka Streams per-record framework (forward, metrics, record queues)', ['StreamTask.process', 'TaskManager.process']),
]


def matches(frame, pattern):
    return frame.startswith(pattern) if pattern.endswith('.') else frame == pattern


def main():
    app, files = sys.argv[1], sys.argv[2:]
    counts = collections.Counter()
    total = 0
    for f in files:
        for e in json.load(open(f))['recording']['events']:
            thread = (e['values'].get('sampledThread') or {}).get('javaName') or ''
            # '<app>-<uuid>-StreamThread-<n>' only: the '<app>-GlobalStreamThread' (global stores' updates) is not
            # the per-record path and was counted here before session 9
            if not thread.startswith(app) or '-StreamThread-' not in thread:
                continue
            frames = [x['method']['type']['name'].split('/')[-1] + '.' + x['method']['name']
                      for x in e['values']['stackTrace']['frames']]
            cost = next((name for fr in frames for name, pats in COSTS if any(matches(fr, p) for p in pats)), 'other')
            counts[cost] += 1
            total += 1
    print(f'| cost | samples | share |\n|---|---|---|')
    for cost, n in counts.most_common():
        print(f'| {cost} | {n} | {n * 100 / max(total, 1):.0f}% |')
    print(f'| **all** | **{total}** | |')


if __name__ == '__main__':
    main()
