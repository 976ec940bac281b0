# SPDX-License-Identifier: Apache-2.0

''' MCP servers as ensembles.

    ``produce_ensemble( name, command = ... )`` or ``produce_ensemble( name,
    url = ... )`` returns an unconnected ensemble; ``async with ensemble:``
    starts or reaches the server, lists its tools and, at the end, stops
    the server and everything it spawned. Importing this module imports the
    ``mcp`` SDK (the ``mcp`` extra).
'''


from . import __
from . import configuration
from . import ensembles
from . import processes
from . import records
from . import results
from . import sessions

from .configuration import ServerParameters, Transports
from .ensembles import ServerEnsemble, produce_ensemble
from .records import (
    CONNECT_TIMEOUT_DEFAULT,
    DEBOUNCE_DEFAULT,
    LIST_TIMEOUT_DEFAULT,
    TIMEOUT_DEFAULT,
    Omission,
    Progress,
    Reporter,
    ServerOptions,
    ToolDescription,
)
