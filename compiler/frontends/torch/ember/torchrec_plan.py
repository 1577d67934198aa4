"""TorchRec sharding plans as the JSON that ember-compile reads and writes, both ways.

TorchRec's ``EmbeddingShardingPlanner(...).plan(model, sharders)`` gives a ``ShardingPlan``
(module path -> table name -> ``ParameterSharding``). ``plan_to_json`` turns it into the JSON
``ember-compile --plan FILE`` compiles; ``plan_from_json`` turns what ``ember-compile
--emit sharding-plan`` writes back into a TorchRec ``ShardingPlan`` (for
``DistributedModelParallel(..., plan=...)`` or TorchRec's own tools)::

    import json
    from ember.torchrec_plan import plan_from_json, plan_to_json

    plan = EmbeddingShardingPlanner(topology=Topology(world_size=2, compute_device="cpu")).plan(
        model, [EmbeddingBagCollectionSharder()])
    with open("plan.json", "w") as f:
        json.dump(plan_to_json(plan), f)
    # ember-compile model.onnx -o model.plan --plan plan.json

    # ember-compile model.onnx -o plan.json --world-size 2 --emit sharding-plan
    with open("plan.json") as f:
        torchrec_plan = plan_from_json(json.load(f))

Tables are matched by name: ``ember.export`` gives the tables of a TorchRec
EmbeddingBagCollection their ``EmbeddingBagConfig`` names and the collection its module
path, so the two planners name the same tables alike.
"""

from typing import Any, Dict


def _shard_json(shard) -> Dict[str, Any]:
    return {"shard_offsets": [int(x) for x in shard.shard_offsets],
            "shard_sizes": [int(x) for x in shard.shard_sizes],
            "placement": str(shard.placement)}


def plan_to_json(plan) -> Dict[str, Any]:
    """A TorchRec ``ShardingPlan`` as ``{module path: {table: ParameterSharding}}`` JSON (the
    fields Ember does not use, such as ``cache_params``, are left out)."""
    out: Dict[str, Any] = {}
    for path, module_plan in plan.plan.items():
        tables = {}
        for table, sharding in module_plan.items():
            spec = sharding.sharding_spec
            shards = getattr(spec, "shards", None) if spec is not None else None
            if spec is not None and shards is None:
                raise ValueError(f"table '{table}' of '{path}': sharding spec "
                                 f"{type(spec).__name__} has no shard list")
            tables[table] = {
                "sharding_type": str(sharding.sharding_type),
                "compute_kernel": str(sharding.compute_kernel),
                "ranks": None if sharding.ranks is None else [int(r) for r in sharding.ranks],
                "sharding_spec": None if spec is None else
                {"shards": [_shard_json(s) for s in shards]},
            }
        out[path] = tables
    return out


def plan_from_json(obj: Dict[str, Any]):
    """``{module path: {table: ParameterSharding}}`` JSON (``ember-compile --emit
    sharding-plan``) as a TorchRec ``ShardingPlan``. Raises ``ValueError`` for a table
    outside a module (a model exported without module paths) or a malformed entry."""
    from torch.distributed._shard.metadata import ShardMetadata
    from torch.distributed._shard.sharding_spec import EnumerableShardingSpec
    from torchrec.distributed.types import (EmbeddingModuleShardingPlan, ParameterSharding,
                                            ShardingPlan)

    plan = {}
    for path, tables in obj.items():
        if not isinstance(tables, dict) or "sharding_type" in tables:
            raise ValueError(f"'{path}' is a table outside a module: TorchRec's plan needs "
                             "the module path (export the model with ember.export)")
        module_plan = EmbeddingModuleShardingPlan()
        for table, entry in tables.items():
            try:
                spec = entry.get("sharding_spec")
                shards = None if spec is None else EnumerableShardingSpec([
                    ShardMetadata(shard_offsets=list(s["shard_offsets"]),
                                  shard_sizes=list(s["shard_sizes"]),
                                  placement=s["placement"]) for s in spec["shards"]])
                kind = entry["sharding_type"]
                module_plan[table] = ParameterSharding(
                    sharding_type=kind,
                    compute_kernel=entry.get("compute_kernel",
                                             "dense" if kind == "data_parallel" else "fused"),
                    ranks=entry.get("ranks"),
                    sharding_spec=shards)
            except (KeyError, TypeError, ValueError) as e:
                raise ValueError(f"table '{table}' of '{path}': malformed entry ({e})") from e
        plan[path] = module_plan
    return ShardingPlan(plan)
