"""A quota or limit of the job's own cloud account, project, subscription or node pool that its request is over
(catalog/scheduler.yaml, the `texts` rows of reason setup; extract/jobend.py): the job's set-up, `app.exception` with
`setup`, in each provider's and provisioner's own words; and the near misses: a cloud's stock-out of the type asked
for (understood, no cause), a wait that will pass, an API's request-rate quota, the words in prose or a retry rule.

Lines marked with a source are verbatim from it, or follow its format where marked so (the ids, zones and names are
this test's).
"""

from __future__ import annotations

import copy

import pytest

from firstfault.analysis.analyze import Analyzer
from firstfault.model import Event
from tests.conftest import WORKLOAD, BundleMaker
from tests.extract import helpers


def feed(lines: list[str]) -> list[Event]:
    return helpers.events(lines, "application", file="nodes/node-02/job.log", node="node-02")


def setup_events(lines: list[str]) -> list[Event]:
    return [e for e in feed(lines) if e.kind == "app.exception" and e.fields.get("setup") is True]


@pytest.mark.parametrize("line", [
    # mspnp/aks-baseline#377: an AKS deployment's inner error, ARM's JSON (verbatim)
    '{"code": "QuotaExceeded", "message": "Provisioning of resource(s) for container service aks-53yrpapt3w4e6 in '
    "resource group rg-bu0001a0008 failed. Message: Operation could not be completed as it results in exceeding "
    "approved Total Regional Cores quota. Additional details - Deployment Model: Resource Manager, Location: eastus2, "
    'Current Limit: 10, Current Usage: 0, Additional Required: 14, (Minimum) New Limit Required: 14.',
    # azure-core's HttpResponseError as the Azure CLI prints it (its format; the family and numbers are this test's)
    "(OperationNotAllowed) Operation could not be completed as it results in exceeding approved standardNCASv3_T4 "
    "Family Cores quota. Additional details - Deployment Model: Resource Manager, Location: westus2, Current Limit: 0, "
    "Current Usage: 0, Additional Required: 4, (Minimum) New Limit Required: 4.",
    "Code: QuotaExceeded",
    # EC2's error message for VcpuLimitExceeded (the EC2 API reference's "Error codes"), in botocore's ClientError
    # frame (its format; the operation and limit are this test's)
    "botocore.exceptions.ClientError: An error occurred (VcpuLimitExceeded) when calling the RunInstances operation: "
    "You have requested more vCPU capacity than your current vCPU limit of 32 allows for the instance bucket that the "
    "specified instance type belongs to. Please visit http://aws.amazon.com/contact-us/ec2-request to request an "
    "adjustment to this limit.",
    # ... the same message in Karpenter's fleet error (its `with fleet error(s), CODE: MESSAGE` format)
    "creating instance, with fleet error(s), VcpuLimitExceeded: You have requested more vCPU capacity than your "
    'current vCPU limit of 0 allows for the instance bucket that the specified instance type belongs to.',
    # EC2's InstanceLimitExceeded message (the EC2 API reference), in the SDK for Go v2's frame (its format)
    "operation error EC2: RunInstances, https response error StatusCode: 400, api error InstanceLimitExceeded: Your "
    "quota allows for 0 more running instance(s). You requested at least 1.",
    # SageMaker's ResourceLimitExceeded (botocore's sagemaker service model names the exception; the request here is
    # this test's)
    "An error occurred (ResourceLimitExceeded) when calling the CreateEndpoint operation: The account-level service "
    "limit 'ml.g5.12xlarge for endpoint usage' is 0 Instances, with current utilization of 0 Instances and a request "
    "delta of 1 Instances.",
    # Compute Engine's quota error as gcloud prints the operation's message (the Compute Engine docs' "Resource
    # quotas" wording; the quota and region are this test's)
    " - Quota 'NVIDIA_A100_GPUS' exceeded.  Limit: 0.0 in region us-central1.",
    " - Quota 'GPUS_ALL_REGIONS' exceeded.  Limit: 0.0 globally.",
    "    code: QUOTA_EXCEEDED",
    # Vertex AI's accelerator quota: the pipeline's error as the Python SDK raises it
    # (GoogleCloudPlatform/vertex-ai-samples#700, verbatim) and as google-api-core raises it
    # (google-deepmind/xmanager#29, verbatim)
    'RuntimeError: Training failed with: code: 8 message: "The following quota metrics exceed quota limits: '
    'aiplatform.googleapis.com/custom_model_training_nvidia_k80_gpus"',
    "google.api_core.exceptions.ResourceExhausted: 429 The following quota metrics exceed quota limits: "
    "aiplatform.googleapis.com/custom_model_training_tpu_v2",
    # AI Platform Training's, as an App Engine app logged it (FIRST-Tech-Challenge/fmltc#318, verbatim)
    "- Error creating the job. Quota failure for project fmltc-400415. The request for 1 K80 accelerators exceeds the "
    "allowed maximum of 0 A100, 0 K80, 0 P100, 0 P4, 0 T4, 0 TPU_V2, 0 TPU_V2_POD, 0 TPU_V3, 0 TPU_V3_POD, 0 V100 "
    "accelerators. To read more about Cloud ML Engine quota, see https://cloud.google.com/ml-engine/quotas.",
    # a GKE cluster's creation over the project's CPU quota, in Deployment Manager's error (kubeflow/examples#597,
    # verbatim, its JSON's escapes kept)
    '"ResourceErrorMessage":{"code":403,"message":"Insufficient project quota to satisfy request: resource '
    '\\"CPUS_ALL_REGIONS\\": request requires \'16.0\' and is short \'4.0\'. project has a quota of \'12.0\' with '
    '\'12.0\' available.",',
    # the GKE cluster autoscaler's FailedScaleUp event, its event logger's template with two reasons joined
    "Node scale up in zones us-east1-b associated with this pod failed: GCE quota exceeded, IP space exhausted. Pod "
    "is at risk of not being scheduled.",
    # Karpenter's scheduler error (kubernetes-sigs/karpenter pkg/controllers/provisioning/scheduling), as its event
    # message carries it
    'Failed to schedule pod, all available instance types exceed limits for nodepool "gpu"',
    # the cluster autoscaler's NotTriggerScaleUp event message (Azure Container Apps' troubleshooting guide, verbatim)
    "pod didn't trigger scale-up: 1 max node group size reached",
])
def test_a_quota_the_jobs_request_is_over_is_its_setup(line: str) -> None:
    assert len(setup_events([line])) == 1


@pytest.mark.parametrize("line", [
    # stock-outs: the cloud had none of the type asked for; no category is the cloud's capacity, nor the job's set-up
    # (EC2's InsufficientInstanceCapacity message, the EC2 API reference; botocore's frame, this test's operation)
    "An error occurred (InsufficientInstanceCapacity) when calling the RunInstances operation (reached max retries: "
    "4): We currently do not have sufficient p4d.24xlarge capacity in the Availability Zone you requested "
    "(us-east-1a).",
    # Compute Engine's stock-out (its troubleshooting guide's wording; the project and zone are this test's)
    "The zone 'projects/acme-ml/zones/us-central1-a' does not have enough resources available to fulfill the "
    "request.  Try a different zone, or try again later.",
    "    code: ZONE_RESOURCE_POOL_EXHAUSTED",
    # Azure's allocation failures (its "Troubleshoot allocation failures" guide's codes)
    "(ZonalAllocationFailed) Allocation failed. We do not have sufficient capacity for the requested VM size in this "
    "zone.",
    "Code: SkuNotAvailable",
    "Node scale up in zones us-central1-c associated with this pod failed: GCE out of resources. Pod is at risk of not "
    "being scheduled.",
    # a wait that will pass: Kueue's unused quota (pkg/scheduler/flavorassigner), the scheduler's own words with
    # preemption possible (kube-scheduler's FailedScheduling message)
    "couldn't assign flavors to pod set main: insufficient unused quota for nvidia.com/gpu in flavor default-flavor, "
    "4 more needed",
    "0/4 nodes are available: 4 Insufficient nvidia.com/gpu. preemption: 0/4 nodes are available: 4 Preemption is not "
    "helpful for scheduling.",
    # an API's request-rate quota (Google's RESOURCE_EXHAUSTED for a per-minute quota): a throttle, not the request
    "google.api_core.exceptions.ResourceExhausted: 429 Quota exceeded for quota metric 'Read requests' and limit "
    "'Read requests per minute' of service 'sheets.googleapis.com'",
    # ... and Vertex AI's per-minute quota of a model's requests (GoogleCloudPlatform/Open_Data_QnA#61, verbatim)
    "google.api_core.exceptions.ResourceExhausted: 429 Quota exceeded for aiplatform.googleapis.com/"
    "generate_content_requests_per_minute_per_project_per_base_model with base model: gemini-pro. Please submit a "
    "quota increase request. https://cloud.google.com/vertex-ai/docs/generative-ai/quotas-genai.",
    # the words in prose (a public write-up on GKE quotas) and a retry rule's list of codes
    '- The message says "GCE quota exceeded", which sends you to CPU. CPU was 10/200.',
    'retryable_codes = ["ResourceLimitExceeded", "VcpuLimitExceeded", "ThrottlingException"]',
])
def test_stock_outs_waits_and_prose_are_no_quota_of_the_job(line: str) -> None:
    assert setup_events([line]) == []


def test_a_stock_out_is_understood() -> None:
    # the provider's own word, read and set aside: no event at all, not the last resort's exception
    line = ("An error occurred (InsufficientInstanceCapacity) when calling the RunInstances operation: We currently do "
            "not have sufficient p4d.24xlarge capacity in the Availability Zone you requested (us-east-1a).")
    assert [e.kind for e in feed([line]) if e.kind.startswith("app.")] == []


def _analyze(make_bundle: BundleMaker, record: str) -> tuple[str, str | None, str]:
    wl = copy.deepcopy(WORKLOAD)
    wl["sources"] = [{"kind": "application", "path": "cluster/service.txt"}]
    v = Analyzer().analyze_path(str(make_bundle({"cluster/service.txt": record}, wl)))
    return (v.attributed_domain, v.root_cause.category if v.root_cause else None,
            v.root_cause.summary if v.root_cause else "")


def test_a_quota_is_the_verdicts_setup(make_bundle: BundleMaker) -> None:
    domain, category, summary = _analyze(
        make_bundle, " - Quota 'NVIDIA_T4_GPUS' exceeded.  Limit: 0.0 in region us-west1.\n")
    assert (domain, category) == ("software", "app.exception.setup")
    assert "NVIDIA_T4_GPUS" in summary


def test_a_stock_out_names_no_cause(make_bundle: BundleMaker) -> None:
    _, category, _ = _analyze(make_bundle, "(ZonalAllocationFailed) Allocation failed. We do not have sufficient "
                                           "capacity for the requested VM size in this zone.\n")
    assert category is None


# The Kubernetes API server refusing the job's own objects for a policy of its namespace or cluster (the formats of
# the admission plugins' messages in kubernetes/kubernetes, as kubectl and a controller's FailedCreate event print
# them; the names and amounts are this test's).
@pytest.mark.parametrize("line", [
    # ResourceQuota admission: `exceeded quota: %s, requested: %s, used: %s, limited: %s`
    'Error from server (Forbidden): error when creating "job.yaml": pods "train-0" is forbidden: exceeded quota: '
    "gpu-quota, requested: requests.nvidia.com/gpu=8, used: requests.nvidia.com/gpu=0, limited: "
    "requests.nvidia.com/gpu=4",
    # ... `failed quota: %s: must specify %s`, in a Job's FailedCreate event as `kubectl describe job` shows it
    '  Warning  FailedCreate  2m  job-controller  Error creating: pods "train-x7k2p" is forbidden: failed quota: '
    "compute-resources: must specify limits.cpu for: train; limits.memory for: train",
    # an admission webhook's denial: `admission webhook %q denied the request: %s`
    'Error from server: error when creating "serve.yaml": admission webhook "validate.kyverno.svc-fail" denied the '
    "request: resource Deployment/llm/serve was blocked due to the following policies require-gpu-node-selector",
    # Pod Security admission: `violates PodSecurity %q: %s`
    'Error from server (Forbidden): error when creating "pod.yaml": pods "gpu-test" is forbidden: violates '
    'PodSecurity "restricted:latest": privileged (container "cuda" must not set securityContext.privileged=true)',
    # its validation of an extended resource asked for with no limit (pkg/apis/core/validation/validation.go
    # validateResourceRequirements), as a JobSet controller logs the Job it could not create (kubeflow/trainer#2363,
    # the error field as logged there)
    'job "torch-test-trainer-node-0" creation failed with error: Job.batch "torch-test-trainer-node-0" is invalid: '
    "spec.template.spec.containers[0].resources.limits: Required value: Limit must be set for non overcommitable "
    "resources",
    # the API server's strict field validation refusing a manifest's unknown field (NVIDIA/k8s-nim-operator#611, the
    # kubectl line as posted, its curly quotes kept)
    "Error from server (BadRequest): error when creating \u201cnim_lws.yaml\u201d: NIMService in version "
    "\u201cv1alpha1\u201d cannot be handled as a NIMService: strict decoding error: unknown field "
    "\u201cspec.multiNode\u201d",
])
def test_the_api_servers_refusal_of_the_jobs_objects_is_its_set_up(line: str) -> None:
    assert len(setup_events([line])) == 1


@pytest.mark.parametrize("line", [
    "admission webhook denied the request",  # no webhook named, no reason: prose
    # Kueue's wait for quota another workload holds: it will be admitted when the quota frees
    "couldn't assign flavors to pod set main: insufficient unused quota for nvidia.com/gpu in flavor a100, 4 more "
    "needed",
    "If a request exceeded quota: the admission fails and the pod is not created.",
    # the rule in prose, not the API server's field error
    "A GPU request needs a limit too: Limit must be set for non overcommitable resources.",
    # ours: kubectl's client-side warning under `--validate=warn`, the object created all the same (apimachinery's
    # field validation warns `unknown field "spec.x"` without the strict decoder's words)
    'Warning: unknown field "spec.multiNode"',
])
def test_words_near_the_api_servers_refusals_are_none(line: str) -> None:
    assert setup_events([line]) == []


# The API server's refusal of an invalid object, one line per field error type the job's own input can draw
# (catalog/scheduler.yaml `is invalid: {word}: <type>` rows: kubernetes/kubernetes staging/src/k8s.io/apimachinery/
# pkg/api/errors/errors.go NewInvalid, pkg/util/validation/field/errors.go ErrorType.String). The first is
# GoogleCloudPlatform/ml-auto-solutions#1369's line (tests/wild sw-jobset-pathways-...-1369, its two lines joined);
# the others ours, each type's body as field.Error prints it.
_INVALID = [
    'The Job is invalid: spec.template.spec.restartPolicy: Invalid value: "OnFailure": only "Never" is supported when '
    "podFailurePolicy is specified",
    'The Job "train" is invalid: spec.template.spec.restartPolicy: Unsupported value: "Always": supported values: '
    '"OnFailure", "Never"',
    'The Pod "w-0" is invalid: spec.containers[0].image: Required value',
    'The JobSet "js" is invalid: spec.replicatedJobs[1].name: Duplicate value: "worker"',
    'The Pod "w-0" is invalid: spec.volumes[0].persistentVolumeClaim.claimName: Not found: "ckpt"',
    'The Job "train" is invalid: spec.template.spec.containers[0].securityContext.privileged: Forbidden: disallowed by '
    "cluster policy",
    'The Job "train" is invalid: metadata.labels: Too long: may not be more than 63 bytes',
    'The Pod "w-0" is invalid: spec.containers: Too many: 300: must have at most 256 items',
]


@pytest.mark.parametrize("line", _INVALID)
def test_the_api_servers_field_errors_of_an_invalid_object_are_its_set_up(line: str) -> None:
    assert len(setup_events([line])) == 1


@pytest.mark.parametrize("line", [
    # the server's own failure, not the job's input (field.InternalError: "not related to user input")
    'The Job "train" is invalid: spec.template: Internal error: failed to convert the object',
    # the type's words without the API server's `is invalid: <path>: ` before them (a CLI's own, clap's form; prose)
    "error: Invalid value: 'cuda' for '--device'",
    "The config is invalid: please see the docs. Invalid value: 3",
    # the first line of ml-auto-solutions#1369 alone, before its wrap is joined: no type yet
    "The Job is invalid: spec.template.spec.restartPolicy:",
])
def test_near_miss_words_like_a_field_error_are_no_set_up(line: str) -> None:
    assert setup_events([line]) == []


# A cloud's client that raised the refusal as its exception (botocore's ClientError, its format; the request is this
# test's): one line, one event, the quota's, whether the line stands alone or ends a traceback.
_RAISED = ("botocore.exceptions.ClientError: An error occurred (ResourceLimitExceeded) when calling the "
           "CreateTrainingJob operation: The account-level service limit 'ml.p4d.24xlarge for training job usage' is 0 "
           "Instances, with current utilization of 0 Instances and a request delta of 2 Instances.")


@pytest.mark.parametrize("lines", [
    [_RAISED],
    ["Traceback (most recent call last):",
     '  File "/opt/ml/launch.py", line 41, in <module>',
     "    estimator.fit(inputs)",
     '  File "/usr/local/lib/python3.10/site-packages/botocore/client.py", line 1023, in _make_api_call',
     "    raise error_class(parsed_response, operation_name)",
     _RAISED],
])
def test_a_quota_a_client_raised_is_one_event_the_quotas(lines: list[str]) -> None:
    events = [e for e in feed(lines) if e.kind == "app.exception"]
    assert [e.fields.get("setup") for e in events] == [True]
