"""No output's metadata reaches a page.

nbconvert writes parts of an output's metadata into the page outside its cleaner (`clean_html` sees
only an output's HTML and Markdown): an image's width and height as unquoted attributes (escaped
for quotes only: `1 onerror=…` was an event handler), its `filenames` entry as the image's address
(a request to any server, or with the TA's cookies to the hub, as the page opened) and `isolated`
HTML as a frame of its own. Autograde keeps no output's metadata (the trusted grader's executed
notebook writes none); the pages drop it too, whatever notebook they render
(c.HTMLExporter.preprocessors in nbgrader_config.py).
"""

from __future__ import annotations

from nbconvert.preprocessors import Preprocessor
from traitlets import Bool


class DropOutputMetadata(Preprocessor):
    """Every output of the page with empty metadata."""

    enabled = Bool(True)

    def preprocess(self, nb, resources):
        for cell in nb.cells:
            outputs = cell.get("outputs")
            for output in outputs if isinstance(outputs, list) else ():
                if isinstance(output, dict) and "metadata" in output:
                    output["metadata"] = {}
        return nb, resources
