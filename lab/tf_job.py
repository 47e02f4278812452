"""A tiny multi-worker TensorFlow job on the CPU: tf.distribute.MultiWorkerMirroredStrategy over gRPC on 127.0.0.1.

The driver starts one process per worker, as a launch script does on each host: `TF_CONFIG='{"cluster": {"worker":
["127.0.0.1:P0", "127.0.0.1:P1", "127.0.0.1:P2"]}, "task": {"type": "worker", "index": r}}' python lab/tf_job.py`,
each process's stdout+stderr into its own log (TensorFlow's C++ lines, `2026-12-07 10:00:00.123456: E
tensorflow/...`, included). Each step is a linear regression's gradient step in a tf.function, the gradients
all-reduced by the strategy's collective ops (ring, gRPC), with the job's collective timeout (LAB_PG_TIMEOUT, 10 s,
CommunicationOptions.timeout_seconds). The faults (LAB_FAULT, see jobenv):

  exception          worker 1's input pipeline decodes a malformed CSV record at step 3 (tf.io.decode_csv raises
                     InvalidArgumentError: a field missing)
  sigkill_external   worker 1 writes its marker and waits; the driver kill -9s it
  hang               worker 1 stops at step 3; the others wait in the all-reduce until the collective timeout
  none               a clean run

A port already taken (`occupy_port`: a leftover process of an earlier job listens on worker 1's TF_CONFIG address)
is the driver's doing, not this script's.
"""

from __future__ import annotations

import json
import os

import jobenv

RANK = int(json.loads(os.environ["TF_CONFIG"])["task"]["index"])
log = jobenv.setup_logging(RANK)

import tensorflow as tf  # noqa: E402  (after logging: TensorFlow's import takes seconds and logs on its own)

FEATURES = 4


def batch(step: int) -> tuple[tf.Tensor, tf.Tensor]:
    """One step's batch from this worker's shard, as CSV records decoded by the input pipeline."""
    rng = tf.random.Generator.from_seed(RANK * 1000 + step)
    x = rng.normal([8, FEATURES])
    records = [",".join(f"{v:.5f}" for v in row) for row in x.numpy().tolist()]
    if jobenv.FAULT == "exception" and jobenv.fires(RANK, step):
        records[5] = records[5].rsplit(",", 1)[0]  # a record of the shard was cut short: one field missing
    cols = tf.io.decode_csv(tf.constant(records), record_defaults=[[0.0]] * FEATURES)
    x = tf.stack(cols, axis=1)
    return x, tf.reduce_sum(x, axis=1, keepdims=True)


def main() -> None:
    options = tf.distribute.experimental.CommunicationOptions(
        implementation=tf.distribute.experimental.CommunicationImplementation.RING,
        timeout_seconds=jobenv.PG_TIMEOUT)
    strategy = tf.distribute.MultiWorkerMirroredStrategy(communication_options=options)
    log.info("worker %d of %d in the cluster (%s)", RANK, strategy.num_replicas_in_sync,
             strategy.extended._cluster_resolver.cluster_spec().as_dict())
    with strategy.scope():
        w = tf.Variable(tf.zeros([FEATURES, 1]), name="w")
        optimizer = tf.keras.optimizers.SGD(0.1)

    @tf.function
    def train_step(x: tf.Tensor, y: tf.Tensor) -> tf.Tensor:
        def replica_step(x: tf.Tensor, y: tf.Tensor) -> tf.Tensor:
            with tf.GradientTape() as tape:
                loss = tf.reduce_mean((tf.matmul(x, w) - y) ** 2)
            optimizer.apply_gradients(zip(tape.gradient(loss, [w]), [w], strict=True))
            return loss

        loss = strategy.run(replica_step, args=(x, y))
        return strategy.reduce(tf.distribute.ReduceOp.MEAN, loss, axis=None)

    for step in range(jobenv.STEPS):
        jobenv.before_step(log, RANK, step)
        x, y = batch(step)
        log.info("step %d: loss %.4f", step, float(train_step(x, y)))
    log.info("training finished after %d steps", jobenv.STEPS)


if __name__ == "__main__":
    main()
