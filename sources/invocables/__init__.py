# SPDX-License-Identifier: Apache-2.0

''' Give tools to any large language model.

    Python functions, TOML descriptors and MCP servers become invokers,
    grouped in ensembles; one processor per provider converts tool
    definitions out, tool calls in (whole or streamed), runs the calls and
    converts the results back.
'''


from . import __
from . import canisters as canisters
import invocables.execution.deduplicators as deduplicators
from . import ensembles as ensembles
from . import exceptions as exceptions
from . import execution as execution
from . import invokers as invokers
from . import naming as naming
import invocables.toolsets.policies as policies
from . import schemata as schemata
from . import telemetry as telemetry

from .canisters import (
    AudioContent as AudioContent,
    Content as Content,
    ContentGenera as ContentGenera,
    Fault as Fault,
    FaultGenera as FaultGenera,
    ImageContent as ImageContent,
    InvocationCanister as InvocationCanister,
    ResourceContent as ResourceContent,
    ResourceLinkContent as ResourceLinkContent,
    ResultCanister as ResultCanister,
    StructureContent as StructureContent,
    TextContent as TextContent,
)
from .execution.deduplicators import (
    Deduplicator as Deduplicator,
    ExactDeduplicator as ExactDeduplicator,
    ResultCache as ResultCache,
    SemanticDeduplicator as SemanticDeduplicator,
    TimeWindowDeduplicator as TimeWindowDeduplicator,
)
from .ensembles import (
    Ensemble as Ensemble,
    EnsembleConfiguration as EnsembleConfiguration,
    EnsemblesPreparation as EnsemblesPreparation,
    LocalEnsemble as LocalEnsemble,
    connect_ensembles as connect_ensembles,
    produce_ensemble as produce_ensemble,
)
from .execution import (
    ExecutionOptions as ExecutionOptions,
    FailurePolicies as FailurePolicies,
    execute_invocations as execute_invocations,
    execute_invoker as execute_invoker,
)
from .invokers import (
    Context as Context,
    FunctionInvoker as FunctionInvoker,
    Invocable as Invocable,
    InvocationContext as InvocationContext,
    Invoker as Invoker,
)
from .signatures import produce_invoker as produce_invoker
from .naming import (
    Nomenclature as Nomenclature,
    produce_nomenclature as produce_nomenclature,
)

from typing_extensions import Doc as Doc


if __.typx.TYPE_CHECKING:
    from . import builtins as builtins
    from . import conversations as conversations
    from . import descriptors as descriptors
    from . import dialects as dialects
    from . import history as history
    from . import mcp as mcp
    from . import processors as processors
    from . import serving as serving
    from .descriptors import prepare_ensembles as prepare_ensembles
    from .processors import produce_processor as produce_processor


__version__: str
__version__ = '1.0a0'


_lazy_modules = frozenset( (
    'builtins', 'conversations', 'descriptors', 'dialects', 'history',
    'mcp', 'processors', 'serving' ) )
_lazy_names: __.cabc.Mapping[ str, str ] = __.types.MappingProxyType( {
    'prepare_ensembles': 'descriptors', 'produce_processor': 'processors' } )


def __getattr__( name: str ) -> __.typx.Any:
    # Modules not needed by the core load on first use, which keeps
    # 'import invocables' about as light as its dependencies.
    from importlib import import_module
    if name in _lazy_modules: return import_module( f"{__name__}.{name}" )
    if name in _lazy_names:
        module = import_module( f"{__name__}.{_lazy_names[ name ]}" )
        return getattr( module, name )
    raise AttributeError( f"module {__name__!r} has no attribute {name!r}" )
