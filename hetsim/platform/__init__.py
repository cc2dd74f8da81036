"""Platforms: memories, core types, clusters, accelerators, links, devices (see schema.py)."""

from hetsim.platform.loader import (
    apply_override,
    json_schema,
    list_platforms,
    load_platform,
    migrate,
    platform_from_dict,
    validate_file,
)
from hetsim.platform.params import by_cores
from hetsim.platform.places import ExecutionPlace, Route
from hetsim.platform.plausibility import plausibility_warnings
from hetsim.platform.schema import SCHEMA_VERSION, Platform

__all__ = [
    "SCHEMA_VERSION", "ExecutionPlace", "Platform", "Route", "apply_override", "by_cores", "json_schema",
    "plausibility_warnings",
    "list_platforms", "load_platform", "migrate", "platform_from_dict", "validate_file",
]
