# SPDX-License-Identifier: Apache-2.0

''' TOML descriptors: configurations, ensembles, invokers, MCP servers.

    A configuration file (``invocables.toml``) lists ensemble descriptors
    and the roots which file tools may touch. An ensemble descriptor names
    its invoker descriptors (local tools, implemented by import path) or
    describes an MCP server. Every file is checked completely before any
    ensemble is produced: an error raises
    :py:class:`invocables.exceptions.DescriptorInvalidity`, naming the file,
    the key path and the fix, and nothing is half-loaded.

    The modules of this package follow the flow: ``records`` (what a valid
    descriptor holds), ``reading`` (files and documents, read safely),
    ``tables`` (keys checked one by one), ``paths`` (files which
    descriptors name), ``loading`` (files into records), ``servers`` (MCP
    servers, to and from the ``mcp`` subpackage), ``assembly`` (records
    into ensembles) and ``writing`` (ensembles back into files).
'''


from . import __
from .assembly import (
    DescriptorInvoker as DescriptorInvoker,
    PinnedEnsemble as PinnedEnsemble,
    prepare_ensembles as prepare_ensembles,
    produce_ensemble as produce_ensemble,
)
from .loading import (
    produce_configuration as produce_configuration,
    produce_ensemble_descriptor as produce_ensemble_descriptor,
    produce_invoker_descriptor as produce_invoker_descriptor,
    produce_server_descriptors as produce_server_descriptors,
)
from .paths import access_data_location as access_data_location
from .reading import (
    DEPTH_MAXIMUM as DEPTH_MAXIMUM,
    SIZE_MAXIMUM as SIZE_MAXIMUM,
)
from .records import (
    CONFIGURATION_NAME as CONFIGURATION_NAME,
    LOCATION_MAPPING as LOCATION_MAPPING,
    Configuration as Configuration,
    ConfigurationSource as ConfigurationSource,
    EnsembleDescriptor as EnsembleDescriptor,
    InvokerDescriptor as InvokerDescriptor,
    Root as Root,
    ServerDescriptor as ServerDescriptor,
)
from .writing import (
    access_descriptor_path as access_descriptor_path,
    create_descriptors as create_descriptors,
    produce_documents as produce_documents,
)
