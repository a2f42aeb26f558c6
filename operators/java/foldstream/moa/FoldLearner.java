package foldstream.moa;

import com.yahoo.labs.samoa.instances.Attribute;
import com.yahoo.labs.samoa.instances.DenseInstance;
import com.yahoo.labs.samoa.instances.Instance;
import com.yahoo.labs.samoa.instances.Instances;
import com.yahoo.labs.samoa.instances.InstancesHeader;
import com.github.javacliparser.FileOption;
import com.github.javacliparser.ListOption;
import com.github.javacliparser.Option;
import com.github.javacliparser.Options;
import moa.classifiers.Classifier;
import moa.classifiers.MultiClassClassifier;
import moa.classifiers.MultiLabelLearner;
import moa.classifiers.MultiTargetRegressor;
import moa.classifiers.Regressor;
import moa.options.AbstractClassOption;
import moa.options.ClassOption;
import moa.options.OptionHandler;
import moa.tasks.Task;

import java.io.ByteArrayInputStream;
import java.io.File;
import java.io.ByteArrayOutputStream;
import java.io.ObjectInputStream;
import java.io.ObjectOutputStream;
import java.io.Serializable;
import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * One MOA classifier on one foldstream fold, driven a batch at a time from Python
 * (foldstream/operators/moa.py), so the Python-Java boundary is crossed once per batch.
 *
 * The instance header grows as the stream shows more: features (numeric, or nominal with
 * their values in order of appearance) and classes (in foldstream's order of first
 * appearance, so MOA's class index is foldstream's class code). The whole object is
 * Serializable: Python pickles it as the bytes of {@link #toBytes()}.
 */
public final class FoldLearner implements Serializable {
    private static final long serialVersionUID = 1L;
    /** Appended to an OutOfMemoryError's text (operators/moa.py says the same). */
    public static final String HEAP_HINT = " (the JVM's heap: engine.jvm_options -Xmx)";

    private Classifier classifier; // null once released (an OutOfMemoryError quarantined it)
    private final List<String> featureNames = new ArrayList<>();
    private final List<List<String>> nominalValues = new ArrayList<>(); // null: numeric
    private final List<String> classValues = new ArrayList<>();
    private InstancesHeader header; // rebuilt when the schema grows
    private boolean started;

    // CPU nanoseconds of the calling thread in predict and in learn, over every process() call
    // (each call's CPU time split between the two as their wall time is); serialised with the
    // learner, so a restored replica counts on.
    public long predictNanos;
    public long learnNanos;
    private static final java.lang.management.ThreadMXBean THREADS =
            java.lang.management.ManagementFactory.getThreadMXBean();

    // The error of the last process() call: the index of the example, phase, text.
    public int errorIndex = -1;
    public String errorPhase;
    public String errorText;
    // The scores of the last process() call that kept them: n rows of classValues.size()
    // values, each row the votes divided by their sum, as MOA's AUC evaluators take them.
    public transient double[] scores;

    private FoldLearner(Classifier classifier) {
        this.classifier = classifier;
    }

    /**
     * The classifier named by a MOA CLI string ("trees.HoeffdingTree -g 100"), parsed, not
     * prepared: nothing an option names is read yet. Refused (IllegalArgumentException) when
     * {@link #refusal} finds a reason.
     */
    public static Classifier parse(String cli) throws Exception {
        Object object = ClassOption.cliStringToObject(cli, Classifier.class, null);
        if (!(object instanceof Classifier)) {
            throw new IllegalArgumentException(cli + " is not a MOA classifier");
        }
        String refused = refusal((Classifier) object);
        if (refused != null) {
            throw new IllegalArgumentException(refused);
        }
        return (Classifier) object;
    }

    /**
     * Why a parsed classifier cannot be a foldstream learner, or null. Its votes must be class
     * scores: a regressor (or a multi-label or multi-target learner) that is no multi-class
     * classifier is refused, at the top and where an option takes a classifier whose default
     * is one. No option may name a file (a FileOption set, or "file:PATH", which MOA reads
     * as a serialised Java object when the learner is prepared), an object by name
     * ("inmem:") or a task (which MOA would run).
     */
    public static String refusal(Classifier classifier) {
        if (votesAreNotClasses(classifier.getClass())) {
            return classifier.getClass().getName() + " is a regressor (or a multi-label or "
                    + "multi-target learner): its votes are not class scores, and foldstream "
                    + "evaluates classifiers";
        }
        return refusal(classifier.getOptions(), "");
    }

    private static boolean votesAreNotClasses(Class<?> type) {
        return !MultiClassClassifier.class.isAssignableFrom(type)
                && (Regressor.class.isAssignableFrom(type)
                    || MultiTargetRegressor.class.isAssignableFrom(type)
                    || MultiLabelLearner.class.isAssignableFrom(type));
    }

    private static String refusal(Options options, String where) {
        for (Option option : options.getOptionArray()) {
            String refused = refusal(option, where + "-" + option.getCLIChar());
            if (refused != null) {
                return refused;
            }
        }
        return null;
    }

    private static String refusal(Option option, String where) {
        if (option instanceof FileOption) {
            String value = ((FileOption) option).getValue();
            String given = option.getDefaultCLIString();
            if (value != null && !value.isEmpty() && !value.equals(given)) {
                return "option " + where + " names a file (" + value + "): MOA would read or "
                        + "write it; foldstream refuses options that name files";
            }
        } else if (option instanceof AbstractClassOption) {
            AbstractClassOption classOption = (AbstractClassOption) option;
            Object value = classOption.getPreMaterializedObject();
            if (value instanceof File || value instanceof String) {
                return "option " + where + " is " + classOption.getValueAsCLIString()
                        + ": a serialised object named by a path (or by name), which MOA would "
                        + "deserialise; foldstream refuses it: give the learner by its class "
                        + "and options";
            }
            if (value instanceof Task) {
                return "option " + where + " is a MOA task (" + value.getClass().getName()
                        + "), which MOA would run; give a learner";
            }
            if (value instanceof Classifier && votesAreNotClasses(value.getClass())
                    && !votesAreNotClasses(defaultClass(classOption))) {
                return "option " + where + " is " + value.getClass().getName() + ", a regressor "
                        + "(or a multi-label or multi-target learner) where the option takes a "
                        + "classifier: its votes are not class scores";
            }
            if (value instanceof OptionHandler) {
                return refusal(((OptionHandler) value).getOptions(), where + " ");
            }
        } else if (option instanceof ListOption) {
            Option[] items = ((ListOption) option).getList();
            for (int i = 0; i < items.length; i++) {
                String refused = refusal(items[i], where + "[" + i + "]");
                if (refused != null) {
                    return refused;
                }
            }
        }
        return null;
    }

    /** The class of a class option's default value (Object when it cannot be resolved). */
    private static Class<?> defaultClass(AbstractClassOption option) {
        String text = option.getDefaultCLIString();
        String name = text == null ? "" : text.trim().split("\\s+")[0];
        for (String candidate : new String[] {name,
                option.getRequiredType().getPackage().getName() + "." + name}) {
            try {
                return Class.forName(candidate);
            } catch (Throwable ignored) {
                // the next candidate
            }
        }
        return Object.class;
    }

    /**
     * A learner for {@code cli}; {@code seed} (when not null) is its random seed, set through
     * Classifier.setRandomSeed before prepareForUse (MOA 24.07's randomSeed option is not on
     * the command line; a learner that is not randomizable ignores it).
     */
    public static FoldLearner create(String cli, Integer seed) throws Exception {
        Classifier classifier = parse(cli);
        if (seed != null) {
            classifier.setRandomSeed(seed);
        }
        classifier.prepareForUse();
        return new FoldLearner(classifier);
    }

    public String cliString() {
        return classifier.getClass().getName() + " " + classifier.getOptions().getAsCLIString();
    }

    public int numFeatures() {
        return featureNames.size();
    }

    public void addNumeric(String name) {
        featureNames.add(name);
        nominalValues.add(null);
        header = null;
    }

    public void addNominal(String name) {
        featureNames.add(name);
        nominalValues.add(new ArrayList<>());
        header = null;
    }

    public void addNominalValue(int feature, String value) {
        nominalValues.get(feature).add(value);
        header = null;
    }

    public void addClass(String label) {
        classValues.add(label);
        header = null;
    }

    private InstancesHeader header() {
        if (header == null) {
            List<Attribute> attributes = new ArrayList<>();
            for (int i = 0; i < featureNames.size(); i++) {
                List<String> values = nominalValues.get(i);
                attributes.add(values == null ? new Attribute(featureNames.get(i))
                                              : new Attribute(featureNames.get(i), new ArrayList<>(values)));
            }
            attributes.add(new Attribute("class", new ArrayList<>(classValues)));
            Instances instances = new Instances("foldstream", attributes, 0);
            instances.setClassIndex(attributes.size() - 1);
            header = new InstancesHeader(instances);
            if (!started) {
                classifier.setModelContext(header);
                started = true;
            }
        }
        return header;
    }

    /**
     * MOA's prediction (moa.core.Utils.maxIndex: the first class of most votes, as MOA's
     * evaluators take it, all-zero votes included), or -1 when the learner is not ready: it
     * has no votes, or it has not been trained yet.
     */
    public int prediction(double[] votes) {
        if (votes.length == 0 || !classifier.trainingHasStarted()) {
            return -1;
        }
        return moa.core.Utils.maxIndex(votes);
    }

    /**
     * Predict then train on n examples. x: n rows of numFeatures() values (NaN: missing;
     * nominal values as their index), y: class codes, w: training weights (0: no training),
     * predict: whether to predict. Returns the predicted class codes (-1: none). On a
     * Throwable it stops and sets errorIndex, errorPhase and errorText.
     */
    public int[] process(double[] x, int[] y, int[] w, boolean[] predict) {
        return process(x, y, w, predict, false);
    }

    /**
     * As {@link #process(double[], int[], int[], boolean[])}; with keepScores, also the
     * scores of every predicted example into {@link #scores} (0 where not predicted): its
     * votes divided by their sum (0/0 is NaN, which the AUC reads as 0, as MOA's evaluators
     * do), whether or not the learner is ready.
     */
    public int[] process(double[] x, int[] y, int[] w, boolean[] predict, boolean keepScores) {
        int n = y.length;
        int d = featureNames.size();
        int k = classValues.size();
        int[] out = new int[n];
        java.util.Arrays.fill(out, -1);
        scores = keepScores ? new double[n * k] : null;
        errorIndex = -1;
        if (classifier == null) {
            errorIndex = 0;
            errorPhase = "predict";
            errorText = "java.lang.IllegalStateException: the learner was released after an "
                    + "OutOfMemoryError";
            return out;
        }
        InstancesHeader h = header();
        GarbageWatch watch = new GarbageWatch();
        // The thread's CPU time is read twice a call (a system call each); the wall clock
        // (read without one) splits it between predict and learn, example by example.
        long cpuStart = THREADS.getCurrentThreadCpuTime();
        long predictWall = 0;
        long learnWall = 0;
        long then = System.nanoTime();
        for (int i = 0; i < n; i++) {
            String phase = "predict";
            try {
                watch.check();
                double[] values = new double[d + 1];
                System.arraycopy(x, i * d, values, 0, d);
                values[d] = y[i];
                Instance instance = new DenseInstance(1.0, values);
                instance.setDataset(h);
                if (predict[i]) {
                    double[] votes = classifier.getVotesForInstance(instance);
                    out[i] = prediction(votes);
                    if (keepScores) {
                        int m = Math.min(votes.length, k);
                        double sum = 0.0;
                        for (int c = 0; c < votes.length; c++) {
                            sum += votes[c];
                        }
                        for (int c = 0; c < m; c++) {
                            scores[i * k + c] = votes[c] / sum;
                        }
                    }
                }
                long now = System.nanoTime();
                predictWall += now - then;
                then = now;
                if (w[i] > 0) {
                    phase = "learn";
                    instance.setWeight(w[i]);
                    classifier.trainOnInstance(instance);
                    now = System.nanoTime();
                    learnWall += now - then;
                    then = now;
                }
            } catch (Throwable error) {
                if (phase.equals("predict")) {
                    out[i] = -1;
                }
                errorIndex = i;
                errorPhase = phase;
                errorText = error.getClass().getName() + ": " + error.getMessage();
                if (error instanceof OutOfMemoryError) {
                    // the replica is quarantined: its model is dropped, so the heap it held
                    // serves the other replicas
                    classifier = null;
                    errorText += HEAP_HINT;
                }
                break;
            }
        }
        long cpu = THREADS.getCurrentThreadCpuTime() - cpuStart;
        long wall = predictWall + learnWall;
        long predicted = wall > 0 ? Math.round(cpu * ((double) predictWall / wall)) : cpu;
        predictNanos += predicted;
        learnNanos += cpu - predicted;
        return out;
    }

    private static ExecutorService pool; // the folds' threads, made on first use
    private static int poolThreads;

    /** The threads of the folds' pool: 0 until a batch was handed to it. */
    public static synchronized int poolThreads() {
        return pool == null ? 0 : poolThreads;
    }

    /**
     * {@link #process} on a thread of a pool of {@code threads} daemon threads, shared by the
     * process's learners: the folds of a batch run side by side. The caller hands a learner
     * to the pool at most once at a time and waits for its result (Future.get) before it
     * touches the learner again, so each model is used by one thread at a time, and each
     * learner's examples are processed in their order whatever thread runs them. A different
     * {@code threads} replaces the pool (the old one finishes what it holds). keepScores as
     * in {@link #process(double[], int[], int[], boolean[], boolean)}.
     */
    public static synchronized Future<int[]> submit(FoldLearner learner, int threads,
                                                    double[] x, int[] y, int[] w,
                                                    boolean[] predict, boolean keepScores) {
        if (pool == null || poolThreads != threads) {
            if (pool != null) {
                pool.shutdown();
            }
            pool = Executors.newFixedThreadPool(threads, task -> {
                Thread thread = new Thread(task, "foldstream-folds");
                thread.setDaemon(true);
                return thread;
            });
            poolThreads = threads;
        }
        return pool.submit(() -> learner.process(x, y, w, predict, keepScores));
    }

    /**
     * A learner that fills the heap makes the JVM collect garbage without end before it
     * throws an OutOfMemoryError, if ever (G1 has no GC overhead limit). This watch ends that
     * early: when, over at least {@link #WINDOW_NS} of one process() call, more than
     * {@link #LIMIT} of the wall time went to collections, it throws an OutOfMemoryError,
     * which quarantines the replica as a real one does.
     */
    static final class GarbageWatch {
        static final long WINDOW_NS = 2_000_000_000L;
        static final double LIMIT = 0.9;
        private long since = System.nanoTime();
        private long collected = collectionMillis();

        static long collectionMillis() {
            long total = 0;
            for (GarbageCollectorMXBean bean : ManagementFactory.getGarbageCollectorMXBeans()) {
                total += Math.max(0, bean.getCollectionTime());
            }
            return total;
        }

        /** Cheap unless a window has passed: a clock read per example. */
        void check() {
            long now = System.nanoTime();
            if (now - since < WINDOW_NS) {
                return;
            }
            long millis = collectionMillis();
            double share = (millis - collected) * 1e6 / (now - since);
            if (share > LIMIT) {
                throw new OutOfMemoryError(String.format(
                        "the JVM spent %.0f%% of the last %.1f s collecting garbage: the heap is "
                        + "full", 100 * Math.min(share, 1.0), (now - since) / 1e9));
            }
            since = now;
            collected = millis;
        }
    }

    public byte[] toBytes() throws Exception {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        try (ObjectOutputStream out = new ObjectOutputStream(bytes)) {
            out.writeObject(this);
        }
        return bytes.toByteArray();
    }

    public static FoldLearner fromBytes(byte[] data) throws Exception {
        try (ObjectInputStream in = new ObjectInputStream(new ByteArrayInputStream(data))) {
            return (FoldLearner) in.readObject();
        }
    }
}
