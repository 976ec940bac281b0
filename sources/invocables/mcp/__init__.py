# SPDX-License-Identifier: Apache-2.0

''' MCP servers as ensembles.

    ``produce_ensemble( name, command = ... )`` or ``produce_ensemble( name,
    url = ... )`` returns an unconnected ensemble; ``async with ensemble:``
    starts or reaches the server, lists its tools and, at the end, stops
    the server and everything it spawned. Importing this module imports the
    ``mcp`` SDK (the ``mcp`` extra).
'''


from . import __
from . import authorization as authorization
from . import callbacks as callbacks
from . import catalog as catalog
from . import configuration as configuration
from . import elicitation as elicitation
from . import ensembles as ensembles
from . import exposure as exposure
from . import listings as listings
from . import _processes as processes
from . import records as records
from . import redaction as redaction
from . import resources as resources
from . import results as results
from . import sandbox as sandbox
from . import sessions as sessions

from .authorization import (
    BearerAuthorization as BearerAuthorization,
    ClientCredentialsAuthorization as ClientCredentialsAuthorization,
    CodeAuthorization as CodeAuthorization,
    EnterpriseAuthorization as EnterpriseAuthorization,
    FileTokenStorage as FileTokenStorage,
    MemoryTokenStorage as MemoryTokenStorage,
    TokenStorage as TokenStorage,
    WorkloadAuthorization as WorkloadAuthorization,
    produce_loopback_authorization as produce_loopback_authorization,
)
from .callbacks import (
    ElicitationActions as ElicitationActions,
    ElicitationRequest as ElicitationRequest,
    ElicitationResponse as ElicitationResponse,
    Elicitor as Elicitor,
    Sampler as Sampler,
    SamplingLimits as SamplingLimits,
    SamplingMessage as SamplingMessage,
    SamplingRequest as SamplingRequest,
    SamplingResponse as SamplingResponse,
    produce_sampler as produce_sampler,
)
from .configuration import (
    ServerParameters as ServerParameters,
    Transports as Transports,
)
from .elicitation import (
    TerminalElicitor as TerminalElicitor,
    produce_terminal_elicitor as produce_terminal_elicitor,
)
from .ensembles import (
    ServerEnsemble as ServerEnsemble,
    produce_ensemble as produce_ensemble,
)
from .records import (
    CONNECT_TIMEOUT_DEFAULT as CONNECT_TIMEOUT_DEFAULT,
    DEBOUNCE_DEFAULT as DEBOUNCE_DEFAULT,
    LIST_TIMEOUT_DEFAULT as LIST_TIMEOUT_DEFAULT,
    RESULT_LIMIT_DEFAULT as RESULT_LIMIT_DEFAULT,
    TIMEOUT_DEFAULT as TIMEOUT_DEFAULT,
    Omission as Omission,
    Progress as Progress,
    Protocols as Protocols,
    Reporter as Reporter,
    ServerOptions as ServerOptions,
    TaskUses as TaskUses,
    ToolDescription as ToolDescription,
)
from .resources import (
    PromptArgument as PromptArgument,
    PromptDescription as PromptDescription,
    PromptMessage as PromptMessage,
    ResourceDescription as ResourceDescription,
    ResourceTemplateDescription as ResourceTemplateDescription,
)
from .sandbox import Sandbox as Sandbox
