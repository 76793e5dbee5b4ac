"""Grading past one machine: `grade` / `pregrade --scheduler ADDRESS` map a batch's submissions
onto the workers of a dask.distributed cluster (the optional extra `[cluster]`).

Modules: kit_version (which kit a process grades with; compared at connect time and by every
task), parcel (a submission's bytes, packed by the instructor's side and written out on a
worker: no shared filesystem), worker_side (what runs on a worker: the probe and the grading
task, in the same sandbox as a local run), client_side (connect and refuse, then
`DaskExecutor`, grade_batch's executor on a cluster: the batch mapped with a bounded number of
submissions in flight), errors. The cluster code imports the engine, never the reverse.

The instructor's process alone writes the outputs, as results come back, exactly as a local
batch does (engine/batch.py): a worker that dies takes nothing written with it, the scheduler
gives its submissions to another worker, and each student's result is written once.
"""
