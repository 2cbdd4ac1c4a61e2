import ArgumentParser
import Foundation

/// Where the accuracy benches find the public recordings they score on, whole. The repository holds only the
/// slices its tests need (Tests/Fixtures/data); the full sets are fetched once from their authors.
enum DataSets {
    /// `--data` when given, else `$MOTION_AGENT_DATA/<relative>`; a missing file or folder is an error that says
    /// what to fetch, from where, and where to put it.
    static func path(_ given: String?, _ relative: String, set: DataSet) throws -> String {
        let path: String
        if let given {
            path = given
        } else if let root = ProcessInfo.processInfo.environment["MOTION_AGENT_DATA"], !root.isEmpty {
            path = URL(fileURLWithPath: root).appendingPathComponent(relative).path
        } else {
            throw ValidationError(
                "no data: pass --data or set MOTION_AGENT_DATA to the folder holding \(relative) — \(set.fetch)"
            )
        }
        guard FileManager.default.fileExists(atPath: path) else {
            throw ValidationError("\(path) does not exist — \(set.fetch)")
        }
        return path
    }

    enum DataSet {
        case broad, steps, activity, falls

        /// What to fetch for this set, and how to lay it out.
        var fetch: String {
            switch self {
            case .broad:
                "fetch the BROAD trials (github.com/dlaidig/broad, CC-BY-4.0) and convert each trial to "
                    + "broad/<trial>.csv with the columns of Tests/Fixtures/data/README.md"
            case .steps:
                "fetch the Oxford step-counter set (github.com/Oxford-step-counter/DataSet, folder optimisation, "
                    + "CC-BY-4.0) into steps/<walk>/accelerometer.csv and groundtruth_footswitch.csv, with its stats.csv"
            case .activity:
                "fetch tmd_dataset_5secondWindow.csv (github.com/deveshsangwan/Transportation-Mode-Detection, CC0) "
                    + "into activity/, and DSADS (UCI Daily and Sports Activities, CC BY 4.0) into activity/dsads/ as "
                    + "aNN_pM.csv.gz, one per activity and subject: segment, t_s, then T_, RA_ and RL_ acc_x..z "
                    + "and gyro_x..z (Tests/Fixtures/data/README.md)"
            case .falls:
                "fetch SisFall (Sucerquia et al., Sensors 17(1):198, 2017; cite it) and lay its trials out as "
                    + "falls/sisfall/SUBJECT/CODE_SUBJECT_RNN.csv.gz with the columns adxl345_x..z, itg3200_x..z (raw counts)"
            }
        }
    }
}
