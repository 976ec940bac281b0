# SPDX-License-Identifier: Apache-2.0

''' The selection benchmark runs and prints its three tables (figures not
    asserted beyond their form).
'''


import re
import subprocess
import sys

from pathlib import Path

import pytest


_root = Path( __file__ ).parents[ 2 ]


@pytest.mark.slow
def test_100_prints_recall_latency_tokens( ):
    ''' A quick run prints recall at 1, 3, 5, latency at three sizes and
        tokens for every provider.
    '''
    completed = subprocess.run(
        [ sys.executable, str( _root / 'benchmarks' / 'selection.py' ),
          '--quick' ],
        capture_output = True, text = True, timeout = 600, cwd = _root )
    assert completed.returncode == 0, completed.stderr
    output = completed.stdout
    recalls = re.findall( r'^\| ([135]) \| (0\.\d+) \|', output, re.MULTILINE )
    assert [ k for k, _ in recalls ] == [ '1', '3', '5' ]
    for size in ( '100', '1,000', '10,000' ):
        assert re.search( rf'^\| {size} \| [0-9.]+ ms \|', output, re.MULTILINE )
    assert '500 tools' in output
    for provider in (
        'anthropic', 'cohere', 'gemini', 'ollama', 'openai',
        'openai-responses',
    ): assert re.search( rf'^\| {provider} \| [0-9,]+ \|', output, re.MULTILINE )
