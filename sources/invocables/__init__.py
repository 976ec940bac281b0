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
from . import ensembles
from . import exceptions
from . import execution
from . import invokers
from . import naming
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

from typing_extensions import Doc


if __.typx.TYPE_CHECKING:
    from . import descriptors
    from . import dialects
    from . import processors
    from .descriptors import prepare_ensembles
    from .processors import produce_processor


__version__: str
__version__ = '1.0a0'


_lazy_modules = frozenset( ( 'descriptors', 'dialects', 'processors' ) )
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
