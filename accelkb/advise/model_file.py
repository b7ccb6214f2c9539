"""A model given as a file (``advise --model FILE --phase ...``) becomes a workload in the graph.

The advise pipeline reasons about a *workload* of the knowledge base (its rules read the
model's and the workload's facts), so a model file is turned into Turtle the knowledge base
validates like any user file:

- ``FILE.json``: the model shapes ``estimate --model FILE.json`` accepts (layers, hidden, heads,
  kv_heads, ffn_hidden, vocab, seq_len, gated_mlp, head_dim), read by the same function, written
  as an ``ak:DecoderModel`` whose every number cites the file;
- ``FILE.ttl``: a Turtle file that describes exactly one transformer model (loaded as data).

Either way a workload ``<model>-<phase>`` is added with the batch and sequence lengths given on
the command line, citing them as the user's. The same file therefore gives the same
:class:`~accelkb.perf.specs.ModelSpec` in ``estimate``, ``configure`` and ``advise``.

Examples
--------
>>> text, name = workload_turtle("my-model", None, "training", global_batch=64,
...                              tokens=None, prompt_len=None, output_len=None)
>>> name
'my-model-training'
"""

from __future__ import annotations

import datetime
import json
import re
from pathlib import Path

from rdflib import RDF, Graph

from accelkb.errors import InputError
from accelkb.ontology import loader
from accelkb.ontology.namespace import AK
from accelkb.perf.api import resolve_model
from accelkb.perf.specs import ModelSpec

USER_NS = "https://w3id.org/accelkb/user/"
_TRANSFORMERS = (AK.DecoderModel, AK.EncoderModel, AK.TransformerModel)
_FIELDS = {"layers": "layers", "hidden": "hiddenSize", "heads": "attentionHeads",
           "kv_heads": "kvHeads", "ffn_hidden": "ffnHiddenSize", "vocab": "vocabSize",
           "seq_len": "sequenceLength", "head_dim": "headDimension"}


def kebab(text: str) -> str:
    """A short name from a file stem: lower case, runs of other characters as one '-'.

    >>> kebab("My_Model v2")
    'my-model-v2'
    """
    return re.sub(r"[^a-z0-9.]+", "-", text.lower()).strip("-.") or "model"


def model_from_turtle(path: Path) -> tuple[str, str]:
    """``(short name, IRI)`` of the one transformer model the Turtle file describes.

    Raises
    ------
    InputError
        If the file describes no transformer model, or more than one.
    """
    name, content = loader.read_user_file(path)
    graph = Graph()
    loader.parse_into(graph, name, content)
    models = sorted({s for t in _TRANSFORMERS for s in graph.subjects(RDF.type, t)}, key=str)
    if len(models) != 1:
        raise InputError(f"--model {path}: expected a Turtle file describing exactly one model "
                         f"(a ak:DecoderModel, ak:EncoderModel or ak:TransformerModel), got "
                         f"{len(models)}")
    short = graph.value(models[0], AK.shortName)
    if short is None:
        raise InputError(f"--model {path}: expected the model {models[0]} to have an ak:shortName")
    return str(short), str(models[0])


def _model_turtle(spec: ModelSpec, name: str, source: str) -> str:
    if spec.tied_embeddings:
        raise InputError(f"--model: tied_embeddings is not yet expressible in the knowledge base "
                         f"(model {spec.name}); give it to `accelkb estimate --model` instead")
    facts = [f"ak:{prop} {getattr(spec, key)}" for key, prop in _FIELDS.items()
             if getattr(spec, key) is not None]
    facts.append(f"ak:gatedMlp {'true' if spec.gated_mlp else 'false'}")
    return (f"<{USER_NS}{name}> a ak:DecoderModel ; rdfs:label {json.dumps(spec.name)} ;\n"
            f"    ak:shortName {json.dumps(name)} ; {' ; '.join(facts)} ;\n"
            f"    dcterms:source <{source}> ; ak:confidence ak:Medium .\n")


def workload_turtle(model: str, spec: ModelSpec | None, phase: str, *, global_batch: int | None,
                    tokens: float | None, prompt_len: int | None, output_len: int | None,
                    model_iri: str | None = None,
                    source_title: str = "the command line of accelkb advise") -> tuple[str, str]:
    """Turtle for a workload of ``model`` (and the model itself when ``spec`` is given; else
    ``model_iri`` names it), and the workload's short name."""
    wname = f"{model}-{phase}"
    source = f"{USER_NS}source-{wname}"
    today = datetime.date.today().isoformat()
    lines = ["@prefix ak: <https://w3id.org/accelkb/schema#> .",
             "@prefix dcterms: <http://purl.org/dc/terms/> .",
             "@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .",
             "@prefix xsd: <http://www.w3.org/2001/XMLSchema#> .", "",
             f"<{source}> a ak:Source ; dcterms:title {json.dumps(source_title)} ;",
             f'    dcterms:publisher "the user" ; dcterms:date "{today}"^^xsd:date ;',
             "    ak:sourceKind ak:UserSupplied .", ""]
    if spec is not None:
        lines.append(_model_turtle(spec, model, source))
    facts = [f"ak:model <{model_iri or USER_NS + model}>",
             f"ak:phase ak:{'Training' if phase == 'training' else 'Inference'}",
             f"ak:globalBatchSize {global_batch}" if global_batch else None,
             f"ak:tokensToTrain {int(tokens)}" if tokens else None,
             f"ak:inputTokens {prompt_len}" if prompt_len else None,
             f"ak:outputTokens {output_len}" if output_len else None]
    lines.append(f"<{USER_NS}{wname}> a ak:Workload ; rdfs:label {json.dumps(wname)} ;\n"
                 f"    ak:shortName {json.dumps(wname)} ; "
                 + " ; ".join(f for f in facts if f)
                 + f" ;\n    dcterms:source <{source}> ; ak:confidence ak:Medium .")
    return "\n".join(lines) + "\n", wname


def model_workload(path: str, phase: str, *, global_batch: int | None, tokens: float | None,
                   prompt_len: int | None, output_len: int | None) -> tuple[list[str], str, str]:
    """``(extra data files, Turtle to add, workload name)`` for ``advise --model PATH``.

    Raises
    ------
    InputError
        For a file that is neither a model JSON nor a Turtle model, or invalid shapes.
    """
    p = Path(path)
    spec: ModelSpec | None = None
    iri: str | None = None
    if p.suffix.lower() == ".json":
        spec = resolve_model(p)
        name, extra = kebab(spec.name), []
    elif p.suffix.lower() in (".ttl", ".turtle", ".trig"):
        (name, iri), extra = model_from_turtle(p), [str(p)]
    else:
        raise InputError(f"--model {path}: expected a model file (.json, or .ttl describing one "
                         f"model), got suffix '{p.suffix or '(none)'}'")
    text, wname = workload_turtle(name, spec, phase, global_batch=global_batch, tokens=tokens,
                                  prompt_len=prompt_len, output_len=output_len, model_iri=iri,
                                  source_title=f"model file {p.name}, given to accelkb advise")
    return extra, text, wname

