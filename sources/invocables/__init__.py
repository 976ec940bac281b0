# SPDX-License-Identifier: Apache-2.0

''' Give tools to any large language model.

    Python functions, TOML descriptors and MCP servers become invokers,
    grouped in ensembles; one processor per provider converts tool
    definitions out, tool calls in (whole or streamed), runs the calls and
    converts the results back.
'''


from . import __
from . import canisters
from . import deduplicators
from . import descriptors
from . import dialects
from . import ensembles
from . import exceptions
from . import execution
from . import invokers
from . import naming
from . import processors
from . import schemata

from .canisters import (
    AudioContent,
    Content,
    ContentGenera,
    Fault,
    FaultGenera,
    ImageContent,
    InvocationCanister,
    ResourceContent,
    ResourceLinkContent,
    ResultCanister,
    StructureContent,
    TextContent,
)
from .deduplicators import Deduplicator, ExactDeduplicator
from .descriptors import prepare_ensembles
from .ensembles import (
    Ensemble,
    EnsembleConfiguration,
    LocalEnsemble,
    produce_ensemble,
)
from .execution import FailurePolicies, execute_invocations
from .invokers import (
    Context,
    FunctionInvoker,
    Invocable,
    InvocationContext,
    Invoker,
    produce_invoker,
)
from .naming import Nomenclature, produce_nomenclature
from .processors import produce_processor

from typing_extensions import Doc


__version__: str
__version__ = '1.0a0'
