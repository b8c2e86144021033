package oracle

import (
	"context"
	"errors"
	"time"
	_ "unsafe" // go:linkname

	admissionregistrationv1 "k8s.io/api/admissionregistration/v1"
	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apiserver/pkg/authentication/authenticator"
	"k8s.io/client-go/util/keyutil"
	"k8s.io/kubernetes/pkg/serviceaccount"

	"kube-authn.example/conformance/vector"
)

// saNow is pkg/serviceaccount's clock (`now = time.Now`, stubbed by k8s' own tests), bound with
// go:linkname to the exact symbol of the pinned k8s.io/kubernetes: the bound-token validator
// reads it once per token, so the vectors' fixed "now" is what it sees.
//
//go:linkname saNow k8s.io/kubernetes/pkg/serviceaccount.now
var saNow func() time.Time

// serviceAccount builds kube-apiserver's service-account token authenticator as
// pkg/kubeapiserver/authenticator/config.go does: the keys parsed by keyutil.ParsePublicKeysPEM
// (--service-account-key-file) behind a static key getter, the legacy authenticator
// (issuer "kubernetes/serviceaccount", NewLegacyValidator without lookups: the vectors' legacy
// cases are --service-account-lookup=false) or the bound one (the --service-account-issuer
// values, NewValidator whose getter answers from the vector's objects), --api-audiences as
// the implicit audiences.
func (b *builder) serviceAccount(n *vector.Node) (authenticator.Token, error) {
	keys, err := keyutil.ParsePublicKeysPEM([]byte(n.Keys))
	if err != nil {
		return nil, configError{err}
	}
	getter, err := serviceaccount.StaticPublicKeysGetter(keys)
	if err != nil {
		return nil, configError{err}
	}
	now := time.Unix(n.Now, 0)
	saNow = func() time.Time { return now }
	b.cleanups = append(b.cleanups, func() { saNow = time.Now })
	auds := authenticator.Audiences(n.ImplicitAudiences)
	switch n.Mode {
	case "legacy":
		if n.Lookup != nil {
			return nil, errors.New("legacy service-account cases with lookups are not supported by this oracle")
		}
		v, err := serviceaccount.NewLegacyValidator(false, nil, nil)
		if err != nil {
			return nil, configError{err}
		}
		return serviceaccount.JWTTokenAuthenticator([]string{serviceaccount.LegacyIssuer}, getter, auds, v), nil
	case "bound":
		objects := objectGetter{}
		if n.Lookup != nil {
			objects = objectGetter{
				serviceAccounts: n.Lookup.ServiceAccounts, secrets: n.Lookup.Secrets,
				pods: n.Lookup.Pods, nodes: n.Lookup.Nodes,
			}
		}
		return serviceaccount.JWTTokenAuthenticator(n.Issuers, getter, auds, serviceaccount.NewValidator(objects)), nil
	}
	return nil, errors.New("service_account: unknown mode " + n.Mode)
}

// objectGetter is the API server's object store for the bound validator (in kube-apiserver,
// informer listers over etcd): it answers from the vector's objects, and a missing object is
// the API's NotFound error, whose text the validator passes on for service accounts.
type objectGetter struct {
	serviceAccounts, secrets, pods, nodes []vector.Object
}

func find(objs []vector.Object, resource, namespace, name string) (metav1.ObjectMeta, error) {
	for _, o := range objs {
		if o.Namespace == namespace && o.Name == name {
			meta := metav1.ObjectMeta{Namespace: o.Namespace, Name: o.Name, UID: types.UID(o.UID)}
			if o.DeletionTimestamp != nil {
				t := metav1.NewTime(time.Unix(*o.DeletionTimestamp, 0))
				meta.DeletionTimestamp = &t
			}
			return meta, nil
		}
	}
	return metav1.ObjectMeta{}, apierrors.NewNotFound(schema.GroupResource{Resource: resource}, name)
}

func (g objectGetter) GetServiceAccount(_ context.Context, namespace, name string) (*v1.ServiceAccount, error) {
	meta, err := find(g.serviceAccounts, "serviceaccounts", namespace, name)
	if err != nil {
		return nil, err
	}
	return &v1.ServiceAccount{ObjectMeta: meta}, nil
}

func (g objectGetter) GetPod(_ context.Context, namespace, name string) (*v1.Pod, error) {
	meta, err := find(g.pods, "pods", namespace, name)
	if err != nil {
		return nil, err
	}
	return &v1.Pod{ObjectMeta: meta}, nil
}

func (g objectGetter) GetSecret(_ context.Context, namespace, name string) (*v1.Secret, error) {
	meta, err := find(g.secrets, "secrets", namespace, name)
	if err != nil {
		return nil, err
	}
	return &v1.Secret{ObjectMeta: meta}, nil
}

func (g objectGetter) GetNode(_ context.Context, name string) (*v1.Node, error) {
	meta, err := find(g.nodes, "nodes", "", name)
	if err != nil {
		return nil, err
	}
	return &v1.Node{ObjectMeta: meta}, nil
}

func (g objectGetter) GetValidatingWebhookConfiguration(_ context.Context, name string) (*admissionregistrationv1.ValidatingWebhookConfiguration, error) {
	return nil, apierrors.NewNotFound(schema.GroupResource{Group: "admissionregistration.k8s.io", Resource: "validatingwebhookconfigurations"}, name)
}

func (g objectGetter) GetMutatingWebhookConfiguration(_ context.Context, name string) (*admissionregistrationv1.MutatingWebhookConfiguration, error) {
	return nil, apierrors.NewNotFound(schema.GroupResource{Group: "admissionregistration.k8s.io", Resource: "mutatingwebhookconfigurations"}, name)
}
