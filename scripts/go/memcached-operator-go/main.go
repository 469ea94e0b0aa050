// The benchmark peer of test/e2e/fixtures/memcached.ts: the same Memcached
// reconcile, written with controller-runtime, so bench/side-by-side.ts can
// compare our runtime with Go's on the same API server. Only the benchmark
// builds it (scripts/build-bench-peer.sh); users of ts-operator-sdk never need Go.
//
// Kept equal to our fixture on purpose: one worker, all namespaces, Owns(Deployment),
// managedFields stripped from the cache, metrics and probes off, no leader election,
// every log line written (JSON on stderr, no sampling), and a "test: reconcile
// started/finished" line per reconcile like memcached-manager.ts.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"time"

	"github.com/go-logr/zapr"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/tools/record"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/log"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
)

const finalizer = "cache.example.com/finalizer"

var groupVersion = schema.GroupVersion{Group: "cache.example.com", Version: "v1"}

// MemcachedSpec, MemcachedStatus and Memcached mirror the fixture's CRD.
type MemcachedSpec struct {
	Size *int32 `json:"size,omitempty"`
}

type MemcachedStatus struct {
	Conditions []metav1.Condition `json:"conditions,omitempty"`
}

type Memcached struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              MemcachedSpec   `json:"spec,omitempty"`
	Status            MemcachedStatus `json:"status,omitempty"`
}

type MemcachedList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Memcached `json:"items"`
}

// Hand-written deep copies (what controller-gen would generate).
func (in *Memcached) DeepCopyInto(out *Memcached) {
	*out = *in
	out.TypeMeta = in.TypeMeta
	in.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	if in.Spec.Size != nil {
		size := *in.Spec.Size
		out.Spec.Size = &size
	}
	if in.Status.Conditions != nil {
		out.Status.Conditions = make([]metav1.Condition, len(in.Status.Conditions))
		for i := range in.Status.Conditions {
			in.Status.Conditions[i].DeepCopyInto(&out.Status.Conditions[i])
		}
	}
}

func (in *Memcached) DeepCopyObject() runtime.Object {
	out := new(Memcached)
	in.DeepCopyInto(out)
	return out
}

func (in *MemcachedList) DeepCopyObject() runtime.Object {
	out := new(MemcachedList)
	*out = *in
	in.ListMeta.DeepCopyInto(&out.ListMeta)
	if in.Items != nil {
		out.Items = make([]Memcached, len(in.Items))
		for i := range in.Items {
			in.Items[i].DeepCopyInto(&out.Items[i])
		}
	}
	return out
}

// MemcachedReconciler is the tutorial's reconciler, step for step as in memcached.ts.
type MemcachedReconciler struct {
	client.Client
	Scheme   *runtime.Scheme
	Recorder record.EventRecorder
}

func (r *MemcachedReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	logger := log.FromContext(ctx)
	logger.Info("test: reconcile started", "name", req.Name, "at", float64(time.Now().UnixNano())/1e6)
	defer func() {
		logger.Info("test: reconcile finished", "name", req.Name, "at", float64(time.Now().UnixNano())/1e6)
	}()

	memcached := &Memcached{}
	if err := r.Get(ctx, req.NamespacedName, memcached); err != nil {
		if apierrors.IsNotFound(err) {
			logger.Info("Memcached resource not found; ignoring since object must be deleted")
			return ctrl.Result{}, nil
		}
		return ctrl.Result{}, err
	}
	if len(memcached.Status.Conditions) == 0 {
		meta.SetStatusCondition(&memcached.Status.Conditions, metav1.Condition{Type: "Available", Status: metav1.ConditionUnknown, Reason: "Reconciling", Message: "Starting reconciliation"})
		if err := r.Status().Update(ctx, memcached); err != nil {
			return ctrl.Result{}, err
		}
		return ctrl.Result{Requeue: true}, nil //nolint:staticcheck // the fixture requeues the same way
	}
	if !memcached.DeletionTimestamp.IsZero() {
		if controllerutil.ContainsFinalizer(memcached, finalizer) {
			if err := r.finalize(ctx, memcached); err != nil {
				return ctrl.Result{}, err
			}
			controllerutil.RemoveFinalizer(memcached, finalizer)
			if err := r.Update(ctx, memcached); err != nil {
				return ctrl.Result{}, err
			}
		}
		return ctrl.Result{}, nil
	}
	if !controllerutil.ContainsFinalizer(memcached, finalizer) {
		controllerutil.AddFinalizer(memcached, finalizer)
		return ctrl.Result{}, r.Update(ctx, memcached)
	}

	size := int32(1)
	if memcached.Spec.Size != nil {
		size = *memcached.Spec.Size
	}
	deployment := &appsv1.Deployment{}
	err := r.Get(ctx, req.NamespacedName, deployment)
	if apierrors.IsNotFound(err) {
		fresh, err := r.deploymentFor(memcached, size)
		if err != nil {
			return ctrl.Result{}, err
		}
		logger.Info("Creating a new Deployment", "deployment", fresh.Name)
		if err := r.Create(ctx, fresh); err != nil {
			return ctrl.Result{}, err
		}
		return ctrl.Result{RequeueAfter: time.Minute}, nil
	} else if err != nil {
		return ctrl.Result{}, err
	}
	if deployment.Spec.Replicas == nil || *deployment.Spec.Replicas != size {
		deployment.Spec.Replicas = &size
		if err := r.Update(ctx, deployment); err != nil {
			return ctrl.Result{}, err
		}
	}
	changed := meta.SetStatusCondition(&memcached.Status.Conditions, metav1.Condition{
		Type: "Available", Status: metav1.ConditionTrue, Reason: "Reconciling",
		Message: fmt.Sprintf("Deployment for custom resource (%s) with %d replicas created successfully", memcached.Name, size),
	})
	if changed {
		if err := r.Status().Update(ctx, memcached); err != nil {
			return ctrl.Result{}, err
		}
	}
	return ctrl.Result{}, nil
}

func (r *MemcachedReconciler) finalize(ctx context.Context, memcached *Memcached) error {
	r.Recorder.Event(memcached, "Warning", "Deleting", fmt.Sprintf("Custom Resource %s is being deleted from the namespace %s", memcached.Name, memcached.Namespace))
	trace := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: memcached.Name + "-finalized", Namespace: memcached.Namespace}, Data: map[string]string{"finalized": "true"}}
	if err := r.Create(ctx, trace); err != nil && !apierrors.IsAlreadyExists(err) && !apierrors.HasStatusCause(err, corev1.NamespaceTerminatingCause) {
		return err
	}
	return nil
}

func (r *MemcachedReconciler) deploymentFor(memcached *Memcached, size int32) (*appsv1.Deployment, error) {
	labels := map[string]string{"app.kubernetes.io/name": "memcached", "app.kubernetes.io/instance": memcached.Name, "app.kubernetes.io/managed-by": "MemcachedController"}
	runAsNonRoot, runAsUser, noEscalation := true, int64(1001), false
	deployment := &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: memcached.Name, Namespace: memcached.Namespace},
		Spec: appsv1.DeploymentSpec{
			Replicas: &size,
			Selector: &metav1.LabelSelector{MatchLabels: labels},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: labels},
				Spec: corev1.PodSpec{
					SecurityContext: &corev1.PodSecurityContext{RunAsNonRoot: &runAsNonRoot, SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault}},
					Containers: []corev1.Container{{
						Name:            "memcached",
						Image:           "memcached:1.6.26-alpine3.19",
						Command:         []string{"memcached", "--memory-limit=64", "-o", "modern", "-v"},
						Ports:           []corev1.ContainerPort{{ContainerPort: 11211, Name: "memcached"}},
						SecurityContext: &corev1.SecurityContext{RunAsNonRoot: &runAsNonRoot, RunAsUser: &runAsUser, AllowPrivilegeEscalation: &noEscalation, Capabilities: &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}}},
					}},
				},
			},
		},
	}
	return deployment, ctrl.SetControllerReference(memcached, deployment, r.Scheme)
}

func main() {
	watchConfigMaps := flag.Bool("watch-configmaps", false, "cache ConfigMaps too, as memcached-manager.ts does with CACHE_CONFIGMAPS=true")
	flag.Parse()

	// JSON on stderr at debug level like ours (pino at debug), and no sampler:
	// every line is written, as ours writes every line.
	core := zapcore.NewCore(zapcore.NewJSONEncoder(zap.NewProductionEncoderConfig()), zapcore.Lock(os.Stderr), zapcore.DebugLevel)
	ctrl.SetLogger(zapr.NewLogger(zap.New(core)))
	setupLog := ctrl.Log.WithName("setup")

	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		panic(err)
	}
	scheme.AddKnownTypes(groupVersion, &Memcached{}, &MemcachedList{})
	metav1.AddToGroupVersion(scheme, groupVersion)

	mgr, err := ctrl.NewManager(ctrl.GetConfigOrDie(), ctrl.Options{
		Scheme:                 scheme,
		Metrics:                metricsserver.Options{BindAddress: "0"},
		HealthProbeBindAddress: "0",
		LeaderElection:         false,
		Cache:                  cache.Options{DefaultTransform: cache.TransformStripManagedFields()},
	})
	if err != nil {
		setupLog.Error(err, "unable to create the manager")
		os.Exit(1)
	}
	reconciler := &MemcachedReconciler{Client: mgr.GetClient(), Scheme: scheme, Recorder: mgr.GetEventRecorderFor("memcached-controller")} //nolint:staticcheck // the old recorder matches ours
	if err := ctrl.NewControllerManagedBy(mgr).For(&Memcached{}).Owns(&appsv1.Deployment{}).Named("memcached").
		WithOptions(controller.Options{MaxConcurrentReconciles: 1}).Complete(reconciler); err != nil {
		setupLog.Error(err, "unable to create the controller")
		os.Exit(1)
	}
	ctx := ctrl.SetupSignalHandler()
	if *watchConfigMaps {
		if _, err := mgr.GetCache().GetInformer(ctx, &corev1.ConfigMap{}, cache.BlockUntilSynced(false)); err != nil {
			setupLog.Error(err, "unable to watch ConfigMaps")
			os.Exit(1)
		}
	}
	if err := mgr.Start(ctx); err != nil {
		setupLog.Error(err, "the manager failed")
		os.Exit(1)
	}
}
