//! The kinds kube-apiserver 1.37.2 registers in its scheme (`legacyscheme.Scheme`, with every
//! API group `pkg/controlplane/import_known_versions.go` installs), for the create handler's
//! answer to a body that names another kind (see [`super::kind`]): its JSON serializer creates
//! the Go type registered for the body's group, version and kind, or fails with
//! `no kind "X" is registered for version "g/v" in scheme "pkg/api/legacyscheme/scheme.go:30"`;
//! a type that is not the endpoint's then fails to convert, `converting (v1.Pod) to
//! (authentication.TokenReview): unknown conversion`.
//!
//! The tables are `Scheme.AllKnownTypes()` of that scheme, printed by this Go program (in a
//! module requiring k8s.io/kubernetes v1.37.2 and its staging modules at v0.37.2, importing the
//! 25 install packages `import_known_versions.go` imports), with what every version shares left
//! out:
//!
//! ```go
//! package main
//!
//! import (
//!     "fmt"
//!     "sort"
//!
//!     "k8s.io/kubernetes/pkg/api/legacyscheme"
//!     _ "k8s.io/kubernetes/pkg/apis/admission/install"
//!     // … the other 24 `_ ".../install"` imports of import_known_versions.go
//! )
//!
//! func main() {
//!     var lines []string
//!     for gvk, t := range legacyscheme.Scheme.AllKnownTypes() {
//!         lines = append(lines, fmt.Sprintf("%s\t%s\t%s", gvk.GroupVersion(), gvk.Kind, t))
//!     }
//!     sort.Strings(lines)
//!     for _, l := range lines {
//!         fmt.Println(l)
//!     }
//! }
//! ```
//!
//! (942 rows: 58 versions, 25 internal versions.) Every version also has metav1's option kinds
//! and `WatchEvent` ([`METAV1_KINDS`], Go types `v1.<Kind>`); every internal version has
//! `WatchEvent` (`v1.InternalEvent`); the unversioned kinds ([`UNVERSIONED_KINDS`], `v1.<Kind>`)
//! are found under any group and version, registered or not (Go's `Scheme.New`).

use crate::create_options::{self, Shape};

use kube_authn::api::{METAV1_KINDS, UNVERSIONED_KINDS};

/// Each registered version (`group/version`, `v1` for the core group) and its own kinds,
/// separated by spaces; the Go type of each is `<version>.<Kind>`.
const VERSIONED: &[(&str, &str)] = &[
    ("admission.k8s.io/v1", "AdmissionReview"),
    ("admission.k8s.io/v1beta1", "AdmissionReview"),
    (
        "admissionregistration.k8s.io/v1",
        "MutatingAdmissionPolicy MutatingAdmissionPolicyBinding \
         MutatingAdmissionPolicyBindingList MutatingAdmissionPolicyList \
         MutatingWebhookConfiguration MutatingWebhookConfigurationList ValidatingAdmissionPolicy \
         ValidatingAdmissionPolicyBinding ValidatingAdmissionPolicyBindingList \
         ValidatingAdmissionPolicyList ValidatingWebhookConfiguration \
         ValidatingWebhookConfigurationList",
    ),
    (
        "admissionregistration.k8s.io/v1alpha1",
        "MutatingAdmissionPolicy MutatingAdmissionPolicyBinding \
         MutatingAdmissionPolicyBindingList MutatingAdmissionPolicyList \
         ValidatingAdmissionPolicy ValidatingAdmissionPolicyBinding \
         ValidatingAdmissionPolicyBindingList ValidatingAdmissionPolicyList",
    ),
    (
        "admissionregistration.k8s.io/v1beta1",
        "MutatingAdmissionPolicy MutatingAdmissionPolicyBinding \
         MutatingAdmissionPolicyBindingList MutatingAdmissionPolicyList \
         MutatingWebhookConfiguration MutatingWebhookConfigurationList ValidatingAdmissionPolicy \
         ValidatingAdmissionPolicyBinding ValidatingAdmissionPolicyBindingList \
         ValidatingAdmissionPolicyList ValidatingWebhookConfiguration \
         ValidatingWebhookConfigurationList",
    ),
    (
        "apps/v1",
        "ControllerRevision ControllerRevisionList DaemonSet DaemonSetList Deployment \
         DeploymentList ReplicaSet ReplicaSetList StatefulSet StatefulSetList",
    ),
    (
        "apps/v1beta1",
        "ControllerRevision ControllerRevisionList Deployment DeploymentList DeploymentRollback \
         Scale StatefulSet StatefulSetList",
    ),
    (
        "apps/v1beta2",
        "ControllerRevision ControllerRevisionList DaemonSet DaemonSetList Deployment \
         DeploymentList ReplicaSet ReplicaSetList Scale StatefulSet StatefulSetList",
    ),
    (
        "authentication.k8s.io/v1",
        "SelfSubjectReview TokenRequest TokenReview",
    ),
    ("authentication.k8s.io/v1alpha1", "SelfSubjectReview"),
    (
        "authentication.k8s.io/v1beta1",
        "SelfSubjectReview TokenReview",
    ),
    (
        "authorization.k8s.io/v1",
        "LocalSubjectAccessReview SelfSubjectAccessReview SelfSubjectRulesReview \
         SubjectAccessReview",
    ),
    (
        "authorization.k8s.io/v1beta1",
        "LocalSubjectAccessReview SelfSubjectAccessReview SelfSubjectRulesReview \
         SubjectAccessReview",
    ),
    (
        "autoscaling/v1",
        "HorizontalPodAutoscaler HorizontalPodAutoscalerList Scale",
    ),
    (
        "autoscaling/v2",
        "HorizontalPodAutoscaler HorizontalPodAutoscalerList",
    ),
    ("batch/v1", "CronJob CronJobList Job JobList"),
    ("batch/v1beta1", "CronJob CronJobList"),
    (
        "certificates.k8s.io/v1",
        "CertificateSigningRequest CertificateSigningRequestList ClusterTrustBundle \
         ClusterTrustBundleList PodCertificateRequest PodCertificateRequestList",
    ),
    (
        "certificates.k8s.io/v1alpha1",
        "ClusterTrustBundle ClusterTrustBundleList",
    ),
    (
        "certificates.k8s.io/v1beta1",
        "CertificateSigningRequest CertificateSigningRequestList ClusterTrustBundle \
         ClusterTrustBundleList PodCertificateRequest PodCertificateRequestList",
    ),
    ("coordination.k8s.io/v1", "Lease LeaseList"),
    (
        "coordination.k8s.io/v1alpha2",
        "LeaseCandidate LeaseCandidateList",
    ),
    (
        "coordination.k8s.io/v1beta1",
        "Lease LeaseCandidate LeaseCandidateList LeaseList",
    ),
    ("discovery.k8s.io/v1", "EndpointSlice EndpointSliceList"),
    (
        "discovery.k8s.io/v1beta1",
        "EndpointSlice EndpointSliceList",
    ),
    ("events.k8s.io/v1", "Event EventList"),
    ("events.k8s.io/v1beta1", "Event EventList"),
    (
        "extensions/v1beta1",
        "DaemonSet DaemonSetList Deployment DeploymentList DeploymentRollback Ingress \
         IngressList NetworkPolicy NetworkPolicyList ReplicaSet ReplicaSetList Scale",
    ),
    (
        "flowcontrol.apiserver.k8s.io/v1",
        "FlowSchema FlowSchemaList PriorityLevelConfiguration PriorityLevelConfigurationList",
    ),
    (
        "flowcontrol.apiserver.k8s.io/v1beta1",
        "FlowSchema FlowSchemaList PriorityLevelConfiguration PriorityLevelConfigurationList",
    ),
    (
        "flowcontrol.apiserver.k8s.io/v1beta2",
        "FlowSchema FlowSchemaList PriorityLevelConfiguration PriorityLevelConfigurationList",
    ),
    (
        "flowcontrol.apiserver.k8s.io/v1beta3",
        "FlowSchema FlowSchemaList PriorityLevelConfiguration PriorityLevelConfigurationList",
    ),
    ("imagepolicy.k8s.io/v1alpha1", "ImageReview"),
    (
        "internal.apiserver.k8s.io/v1alpha1",
        "StorageVersion StorageVersionList",
    ),
    (
        "lifecycle.k8s.io/v1alpha1",
        "Eviction EvictionList EvictionRequest EvictionRequestList",
    ),
    (
        "networking.k8s.io/v1",
        "IPAddress IPAddressList Ingress IngressClass IngressClassList IngressList NetworkPolicy \
         NetworkPolicyList ServiceCIDR ServiceCIDRList",
    ),
    (
        "networking.k8s.io/v1beta1",
        "IPAddress IPAddressList Ingress IngressClass IngressClassList IngressList ServiceCIDR \
         ServiceCIDRList",
    ),
    ("node.k8s.io/v1", "RuntimeClass RuntimeClassList"),
    ("node.k8s.io/v1alpha1", "RuntimeClass RuntimeClassList"),
    ("node.k8s.io/v1beta1", "RuntimeClass RuntimeClassList"),
    (
        "policy/v1",
        "Eviction PodDisruptionBudget PodDisruptionBudgetList",
    ),
    (
        "policy/v1beta1",
        "Eviction PodDisruptionBudget PodDisruptionBudgetList",
    ),
    (
        "rbac.authorization.k8s.io/v1",
        "ClusterRole ClusterRoleBinding ClusterRoleBindingList ClusterRoleList Role RoleBinding \
         RoleBindingList RoleList",
    ),
    (
        "rbac.authorization.k8s.io/v1alpha1",
        "ClusterRole ClusterRoleBinding ClusterRoleBindingList ClusterRoleList Role RoleBinding \
         RoleBindingList RoleList",
    ),
    (
        "rbac.authorization.k8s.io/v1beta1",
        "ClusterRole ClusterRoleBinding ClusterRoleBindingList ClusterRoleList Role RoleBinding \
         RoleBindingList RoleList",
    ),
    (
        "resource.k8s.io/v1",
        "DeviceClass DeviceClassList DeviceTaintRule DeviceTaintRuleList ResourceClaim \
         ResourceClaimList ResourceClaimTemplate ResourceClaimTemplateList ResourceSlice \
         ResourceSliceList",
    ),
    (
        "resource.k8s.io/v1alpha3",
        "DeviceTaintRule DeviceTaintRuleList ResourcePoolStatusRequest \
         ResourcePoolStatusRequestList",
    ),
    (
        "resource.k8s.io/v1beta1",
        "DeviceClass DeviceClassList ResourceClaim ResourceClaimList ResourceClaimTemplate \
         ResourceClaimTemplateList ResourceSlice ResourceSliceList",
    ),
    (
        "resource.k8s.io/v1beta2",
        "DeviceClass DeviceClassList DeviceTaintRule DeviceTaintRuleList ResourceClaim \
         ResourceClaimList ResourceClaimTemplate ResourceClaimTemplateList ResourceSlice \
         ResourceSliceList",
    ),
    ("scheduling.k8s.io/v1", "PriorityClass PriorityClassList"),
    (
        "scheduling.k8s.io/v1alpha3",
        "CompositePodGroup CompositePodGroupList PodGroup PodGroupList Workload WorkloadList",
    ),
    (
        "scheduling.k8s.io/v1beta1",
        "PodGroup PodGroupList PriorityClass PriorityClassList Workload WorkloadList",
    ),
    (
        "storage.k8s.io/v1",
        "CSIDriver CSIDriverList CSINode CSINodeList CSIStorageCapacity CSIStorageCapacityList \
         StorageClass StorageClassList VolumeAttachment VolumeAttachmentList \
         VolumeAttributesClass VolumeAttributesClassList",
    ),
    (
        "storage.k8s.io/v1alpha1",
        "CSIStorageCapacity CSIStorageCapacityList VolumeAttachment VolumeAttachmentList \
         VolumeAttributesClass VolumeAttributesClassList",
    ),
    (
        "storage.k8s.io/v1beta1",
        "CSIDriver CSIDriverList CSINode CSINodeList CSIStorageCapacity CSIStorageCapacityList \
         StorageClass StorageClassList VolumeAttachment VolumeAttachmentList \
         VolumeAttributesClass VolumeAttributesClassList",
    ),
    (
        "storagemigration.k8s.io/v1",
        "StorageVersionMigration StorageVersionMigrationList",
    ),
    (
        "storagemigration.k8s.io/v1beta1",
        "StorageVersionMigration StorageVersionMigrationList",
    ),
    (
        "v1",
        "Binding ComponentStatus ComponentStatusList ConfigMap ConfigMapList Endpoints \
         EndpointsList Event EventList LimitRange LimitRangeList List Namespace NamespaceList \
         Node NodeList NodeProxyOptions PersistentVolume PersistentVolumeClaim \
         PersistentVolumeClaimList PersistentVolumeList Pod PodAttachOptions PodExecOptions \
         PodList PodLogOptions PodPortForwardOptions PodProxyOptions PodTemplate PodTemplateList \
         RangeAllocation ReplicationController ReplicationControllerList ResourceQuota \
         ResourceQuotaList Secret SecretList SerializedReference Service ServiceAccount \
         ServiceAccountList ServiceList ServiceProxyOptions",
    ),
];

/// Each group's internal version (`""` for the core group) and its kinds' Go types
/// (`<package>.<Kind>`: an internal kind may be another group's type).
const INTERNAL: &[(&str, &str)] = &[
    (
        "",
        "core.Binding core.ComponentStatus core.ComponentStatusList core.ConfigMap \
         core.ConfigMapList core.Endpoints core.EndpointsList core.Event core.EventList \
         core.LimitRange core.LimitRangeList core.List core.Namespace core.NamespaceList \
         core.Node core.NodeList core.NodeProxyOptions core.PersistentVolume \
         core.PersistentVolumeClaim core.PersistentVolumeClaimList core.PersistentVolumeList \
         core.Pod core.PodAttachOptions core.PodExecOptions core.PodList core.PodLogOptions \
         core.PodPortForwardOptions core.PodProxyOptions core.PodTemplate core.PodTemplateList \
         core.RangeAllocation core.ReplicationController core.ReplicationControllerList \
         core.ResourceQuota core.ResourceQuotaList core.Secret core.SecretList \
         core.SerializedReference core.Service core.ServiceAccount core.ServiceAccountList \
         core.ServiceList core.ServiceProxyOptions",
    ),
    ("admission.k8s.io", "admission.AdmissionReview"),
    (
        "admissionregistration.k8s.io",
        "admissionregistration.MutatingAdmissionPolicy \
         admissionregistration.MutatingAdmissionPolicyBinding \
         admissionregistration.MutatingAdmissionPolicyBindingList \
         admissionregistration.MutatingAdmissionPolicyList \
         admissionregistration.MutatingWebhookConfiguration \
         admissionregistration.MutatingWebhookConfigurationList \
         admissionregistration.ValidatingAdmissionPolicy \
         admissionregistration.ValidatingAdmissionPolicyBinding \
         admissionregistration.ValidatingAdmissionPolicyBindingList \
         admissionregistration.ValidatingAdmissionPolicyList \
         admissionregistration.ValidatingWebhookConfiguration \
         admissionregistration.ValidatingWebhookConfigurationList",
    ),
    (
        "apps",
        "apps.ControllerRevision apps.ControllerRevisionList apps.DaemonSet apps.DaemonSetList \
         apps.Deployment apps.DeploymentList apps.DeploymentRollback apps.ReplicaSet \
         apps.ReplicaSetList autoscaling.Scale apps.StatefulSet apps.StatefulSetList",
    ),
    (
        "authentication.k8s.io",
        "authentication.SelfSubjectReview authentication.TokenRequest authentication.TokenReview",
    ),
    (
        "authorization.k8s.io",
        "authorization.LocalSubjectAccessReview authorization.SelfSubjectAccessReview \
         authorization.SelfSubjectRulesReview authorization.SubjectAccessReview",
    ),
    (
        "autoscaling",
        "autoscaling.HorizontalPodAutoscaler autoscaling.HorizontalPodAutoscalerList \
         autoscaling.Scale",
    ),
    (
        "batch",
        "batch.CronJob batch.CronJobList batch.Job batch.JobList",
    ),
    (
        "certificates.k8s.io",
        "certificates.CertificateSigningRequest certificates.CertificateSigningRequestList \
         certificates.ClusterTrustBundle certificates.ClusterTrustBundleList \
         certificates.PodCertificateRequest certificates.PodCertificateRequestList",
    ),
    (
        "coordination.k8s.io",
        "coordination.Lease coordination.LeaseCandidate coordination.LeaseCandidateList \
         coordination.LeaseList",
    ),
    (
        "discovery.k8s.io",
        "discovery.EndpointSlice discovery.EndpointSliceList",
    ),
    ("events.k8s.io", "core.Event core.EventList"),
    (
        "extensions",
        "apps.DaemonSet apps.DaemonSetList apps.Deployment apps.DeploymentList \
         apps.DeploymentRollback networking.Ingress networking.IngressList \
         networking.NetworkPolicy networking.NetworkPolicyList apps.ReplicaSet \
         apps.ReplicaSetList autoscaling.Scale",
    ),
    (
        "flowcontrol.apiserver.k8s.io",
        "flowcontrol.FlowSchema flowcontrol.FlowSchemaList \
         flowcontrol.PriorityLevelConfiguration flowcontrol.PriorityLevelConfigurationList",
    ),
    ("imagepolicy.k8s.io", "imagepolicy.ImageReview"),
    (
        "internal.apiserver.k8s.io",
        "apiserverinternal.StorageVersion apiserverinternal.StorageVersionList",
    ),
    (
        "lifecycle.k8s.io",
        "lifecycle.Eviction lifecycle.EvictionList lifecycle.EvictionRequest \
         lifecycle.EvictionRequestList",
    ),
    (
        "networking.k8s.io",
        "networking.IPAddress networking.IPAddressList networking.Ingress \
         networking.IngressClass networking.IngressClassList networking.IngressList \
         networking.NetworkPolicy networking.NetworkPolicyList networking.ServiceCIDR \
         networking.ServiceCIDRList",
    ),
    ("node.k8s.io", "node.RuntimeClass node.RuntimeClassList"),
    (
        "policy",
        "policy.Eviction policy.PodDisruptionBudget policy.PodDisruptionBudgetList",
    ),
    (
        "rbac.authorization.k8s.io",
        "rbac.ClusterRole rbac.ClusterRoleBinding rbac.ClusterRoleBindingList \
         rbac.ClusterRoleList rbac.Role rbac.RoleBinding rbac.RoleBindingList rbac.RoleList",
    ),
    (
        "resource.k8s.io",
        "resource.DeviceClass resource.DeviceClassList resource.DeviceTaintRule \
         resource.DeviceTaintRuleList resource.ResourceClaim resource.ResourceClaimList \
         resource.ResourceClaimTemplate resource.ResourceClaimTemplateList \
         resource.ResourcePoolStatusRequest resource.ResourcePoolStatusRequestList \
         resource.ResourceSlice resource.ResourceSliceList",
    ),
    (
        "scheduling.k8s.io",
        "scheduling.CompositePodGroup scheduling.CompositePodGroupList scheduling.PodGroup \
         scheduling.PodGroupList scheduling.PriorityClass scheduling.PriorityClassList \
         scheduling.Workload scheduling.WorkloadList",
    ),
    (
        "storage.k8s.io",
        "storage.CSIDriver storage.CSIDriverList storage.CSINode storage.CSINodeList \
         storage.CSIStorageCapacity storage.CSIStorageCapacityList storage.StorageClass \
         storage.StorageClassList storage.VolumeAttachment storage.VolumeAttachmentList \
         storage.VolumeAttributesClass storage.VolumeAttributesClassList",
    ),
    (
        "storagemigration.k8s.io",
        "storagemigration.StorageVersionMigration storagemigration.StorageVersionMigrationList",
    ),
];

/// The internal version's name.
pub const INTERNAL_VERSION: &str = "__internal";

/// The Go type (`v1.Pod`, `authentication.TokenReview`) kube-apiserver's scheme creates for
/// `kind` in `group`/`version`, or `None` when nothing is registered there.
pub fn go_type(group: &str, version: &str, kind: &str) -> Option<String> {
    let listed = |kinds: &str| kinds.split(' ').any(|k| k == kind);
    let registered = if version == INTERNAL_VERSION {
        INTERNAL
            .iter()
            .find(|(g, _)| *g == group)
            .and_then(|(_, types)| {
                if kind == "WatchEvent" {
                    return Some("v1.InternalEvent".to_owned());
                }
                types
                    .split(' ')
                    .find(|t| t.split_once('.').is_some_and(|(_, name)| name == kind))
                    .map(str::to_owned)
            })
    } else {
        let gv = if group.is_empty() {
            version.to_owned()
        } else {
            format!("{group}/{version}")
        };
        VERSIONED
            .iter()
            .find(|(v, _)| *v == gv)
            .and_then(|(_, kinds)| {
                if METAV1_KINDS.contains(&kind) {
                    Some(format!("v1.{kind}"))
                } else {
                    listed(kinds).then(|| format!("{version}.{kind}"))
                }
            })
    };
    registered.or_else(|| {
        UNVERSIONED_KINDS
            .contains(&kind)
            .then(|| format!("v1.{kind}"))
    })
}

/// The strict decoder's layout of the Go type kube-apiserver's JSON serializer decodes a
/// `kind` body declaring `version` into (the type the body declares, not the endpoint's: its
/// type errors and unknown fields come before the version check), for the two reviews'
/// kinds and the versions [`go_type`] registers for them in `authentication.k8s.io`; `None`
/// for any other.
///
/// An internal type embeds `metav1.TypeMeta` and `metav1.ObjectMeta` (their JSON names are
/// promoted to the top level) and has no JSON names of its own: its fields are matched by Go
/// name, case-sensitively, as the strict decoder matches every field (`Spec`, not `spec`).
pub(super) fn declared_shape(kind: &str, version: &str) -> Option<&'static Shape> {
    Some(match (kind, version) {
        ("TokenReview", "v1") => &create_options::TOKEN_REVIEW,
        ("TokenReview", "v1beta1") => &create_options::TOKEN_REVIEW_V1BETA1,
        ("TokenReview", INTERNAL_VERSION) => &INTERNAL_TOKEN_REVIEW,
        ("SelfSubjectReview", "v1") => &create_options::SELF_SUBJECT_REVIEW,
        ("SelfSubjectReview", "v1beta1") => &SELF_SUBJECT_REVIEW_V1BETA1,
        ("SelfSubjectReview", "v1alpha1") => &SELF_SUBJECT_REVIEW_V1ALPHA1,
        ("SelfSubjectReview", INTERNAL_VERSION) => &INTERNAL_SELF_SUBJECT_REVIEW,
        _ => return None,
    })
}

/// The shape of the field `name` of the struct `shape` (at compile time: a missing field fails
/// the build).
const fn field(shape: &'static Shape, name: &str) -> &'static Shape {
    let Shape::Struct(_, fields) = shape else {
        panic!("not a struct")
    };
    let mut i = 0;
    while i < fields.len() {
        let (a, b) = (fields[i].0.as_bytes(), name.as_bytes());
        if a.len() == b.len() {
            let mut j = 0;
            while j < a.len() && a[j] == b[j] {
                j += 1;
            }
            if j == a.len() {
                return fields[i].1;
            }
        }
        i += 1;
    }
    panic!("no such field")
}

/// The fields of the struct `shape`.
const fn fields_of(shape: &'static Shape) -> &'static [(&'static str, &'static Shape)] {
    match shape {
        Shape::Struct(_, fields) => fields,
        _ => panic!("not a struct"),
    }
}

/// `metav1.ObjectMeta`, as the versioned reviews' `metadata`.
const OBJECT_META: &Shape = field(&create_options::TOKEN_REVIEW, "metadata");

/// `authentication/v1.UserInfo`, which every SelfSubjectReview version holds.
const V1_USER_INFO: &Shape = field(
    field(&create_options::SELF_SUBJECT_REVIEW, "status"),
    "userInfo",
);

/// A versioned SelfSubjectReview other than v1 (`v1alpha1`, `v1beta1`: its own struct types
/// around `v1.UserInfo`).
macro_rules! self_subject_review {
    ($v:literal) => {
        Shape::Struct(
            concat!($v, ".SelfSubjectReview"),
            &[
                ("kind", &Shape::Any),
                ("apiVersion", &Shape::Any),
                ("metadata", OBJECT_META),
                (
                    "status",
                    &Shape::Struct(
                        concat!($v, ".SelfSubjectReviewStatus"),
                        &[("userInfo", V1_USER_INFO)],
                    ),
                ),
            ],
        )
    };
}

const SELF_SUBJECT_REVIEW_V1BETA1: Shape = self_subject_review!("v1beta1");
const SELF_SUBJECT_REVIEW_V1ALPHA1: Shape = self_subject_review!("v1alpha1");

const STRING: Shape = Shape::Str("string");
const STRINGS: Shape = Shape::List("[]string", &STRING);

/// `authentication.UserInfo` (internal).
const INTERNAL_USER_INFO: Shape = Shape::Struct(
    "authentication.UserInfo",
    &[
        ("Username", &STRING),
        ("UID", &STRING),
        ("Groups", &STRINGS),
        (
            "Extra",
            &Shape::Map(
                "map[string]authentication.ExtraValue",
                &Shape::List("authentication.ExtraValue", &STRING),
            ),
        ),
    ],
);

/// An internal review's fields: `kind`, `apiVersion` and `metav1.ObjectMeta`'s (embedded),
/// then `own`.
const fn internal_fields<const N: usize>(
    own: &[(&'static str, &'static Shape)],
) -> [(&'static str, &'static Shape); N] {
    let meta = fields_of(OBJECT_META);
    let mut out: [(&'static str, &'static Shape); N] = [("", &Shape::Any); N];
    out[0] = ("kind", &Shape::Any);
    out[1] = ("apiVersion", &Shape::Any);
    let mut i = 0;
    while i < meta.len() {
        out[2 + i] = meta[i];
        i += 1;
    }
    let mut j = 0;
    while j < own.len() {
        out[2 + meta.len() + j] = own[j];
        j += 1;
    }
    assert!(2 + meta.len() + own.len() == N, "wrong field count");
    out
}

const INTERNAL_TOKEN_REVIEW_FIELDS: [(&str, &Shape); fields_of(OBJECT_META).len() + 4] =
    internal_fields(&[
        (
            "Spec",
            &Shape::Struct(
                "authentication.TokenReviewSpec",
                &[("Token", &STRING), ("Audiences", &STRINGS)],
            ),
        ),
        (
            "Status",
            &Shape::Struct(
                "authentication.TokenReviewStatus",
                &[
                    ("Authenticated", &Shape::Bool),
                    ("User", &INTERNAL_USER_INFO),
                    ("Audiences", &STRINGS),
                    ("Error", &STRING),
                ],
            ),
        ),
    ]);

/// `authentication.TokenReview` (internal).
const INTERNAL_TOKEN_REVIEW: Shape =
    Shape::Struct("authentication.TokenReview", &INTERNAL_TOKEN_REVIEW_FIELDS);

const INTERNAL_SELF_SUBJECT_REVIEW_FIELDS: [(&str, &Shape); fields_of(OBJECT_META).len() + 3] =
    internal_fields(&[(
        "Status",
        &Shape::Struct(
            "authentication.SelfSubjectReviewStatus",
            &[("UserInfo", &INTERNAL_USER_INFO)],
        ),
    )]);

/// `authentication.SelfSubjectReview` (internal).
const INTERNAL_SELF_SUBJECT_REVIEW: Shape = Shape::Struct(
    "authentication.SelfSubjectReview",
    &INTERNAL_SELF_SUBJECT_REVIEW_FIELDS,
);

#[cfg(test)]
mod tests {
    use super::*;

    /// Rows of the Go program's output (and what it does not list: unregistered pairs, the
    /// unversioned kinds anywhere).
    #[test]
    fn go_types_are_kube_apiservers() {
        let cases = [
            ("", "v1", "Pod", Some("v1.Pod")),
            ("", "v1", "Status", Some("v1.Status")),
            ("", "v1", "WatchEvent", Some("v1.WatchEvent")),
            ("", "v1", "TokenReview", None),
            ("", "__internal", "Pod", Some("core.Pod")),
            ("", "__internal", "WatchEvent", Some("v1.InternalEvent")),
            ("apps", "v1", "Deployment", Some("v1.Deployment")),
            ("apps", "v1beta1", "Scale", Some("v1beta1.Scale")),
            ("apps", "__internal", "Scale", Some("autoscaling.Scale")),
            (
                "autoscaling",
                "v2",
                "HorizontalPodAutoscaler",
                Some("v2.HorizontalPodAutoscaler"),
            ),
            (
                "extensions",
                "__internal",
                "Ingress",
                Some("networking.Ingress"),
            ),
            (
                "authentication.k8s.io",
                "v1",
                "TokenReview",
                Some("v1.TokenReview"),
            ),
            (
                "authentication.k8s.io",
                "v1",
                "TokenRequest",
                Some("v1.TokenRequest"),
            ),
            (
                "authentication.k8s.io",
                "v1",
                "CreateOptions",
                Some("v1.CreateOptions"),
            ),
            (
                "authentication.k8s.io",
                "v1beta1",
                "CreateOptions",
                Some("v1.CreateOptions"),
            ),
            ("authentication.k8s.io", "v1", "List", None),
            ("authentication.k8s.io", "v1", "tokenreview", None),
            (
                "authentication.k8s.io",
                "v1beta1",
                "TokenReview",
                Some("v1beta1.TokenReview"),
            ),
            ("authentication.k8s.io", "v1alpha1", "TokenReview", None),
            (
                "authentication.k8s.io",
                "v1alpha1",
                "SelfSubjectReview",
                Some("v1alpha1.SelfSubjectReview"),
            ),
            (
                "authentication.k8s.io",
                "__internal",
                "TokenReview",
                Some("authentication.TokenReview"),
            ),
            ("authentication.k8s.io", "v9", "TokenReview", None),
            ("foo", "v9", "WatchEvent", None),
            ("foo", "v9", "APIGroup", Some("v1.APIGroup")),
            ("foo", "__internal", "Status", Some("v1.Status")),
            ("foo", "__internal", "Pod", None),
            ("", "authentication.k8s.io", "TokenReview", None),
        ];
        for (group, version, kind, want) in cases {
            assert_eq!(
                go_type(group, version, kind).as_deref(),
                want,
                "{group}/{version} {kind}"
            );
        }
    }

    /// Every row of the Go program's output is found with the type it printed: the tables'
    /// total is its 942 rows.
    #[test]
    fn the_tables_hold_every_registered_kind() {
        let versioned: usize = VERSIONED
            .iter()
            .map(|(_, kinds)| kinds.split(' ').count() + METAV1_KINDS.len())
            .sum();
        let internal: usize = INTERNAL
            .iter()
            .map(|(_, types)| types.split(' ').count() + 1)
            .sum();
        // The core version also lists the unversioned kinds, which are left out here.
        assert_eq!(versioned + internal + UNVERSIONED_KINDS.len(), 942);
        for (gv, kinds) in VERSIONED {
            let (group, version) = gv.split_once('/').unwrap_or(("", gv));
            for kind in kinds.split(' ') {
                assert_eq!(
                    go_type(group, version, kind),
                    Some(format!("{version}.{kind}")),
                    "{gv} {kind}"
                );
            }
        }
        for (group, types) in INTERNAL {
            for t in types.split(' ') {
                let (_, kind) = t.split_once('.').unwrap();
                assert_eq!(go_type(group, INTERNAL_VERSION, kind).as_deref(), Some(t));
            }
        }
    }
}
